# The LBM Arena model API's own local testing script (seed 002), unchanged but for the
# call at the end, which takes the base URL from the command line and fails on errors.
import requests
import json
import sys

def test_model_api(base_url, api_key=None):
    headers = {'Content-Type': 'application/json'}
    if api_key:
        headers['Authorization'] = f'Bearer {api_key}'
    
    # Test health check
    health_response = requests.get(f'{base_url}/model/health', headers=headers)
    print(f"Health check: {health_response.status_code}")
    
    # Test move request
    move_request = {
        "game_id": "tic-tac-toe",
        "game_state": {
            "board": [["", "", ""], ["X", "", ""], ["", "", "O"]],
            "current_player": "X",
            "turn": 3
        },
        "valid_moves": [
            {"row": 0, "col": 0}, {"row": 0, "col": 1}, {"row": 0, "col": 2},
            {"row": 1, "col": 1}, {"row": 1, "col": 2},
            {"row": 2, "col": 0}, {"row": 2, "col": 1}
        ],
        "time_limit_ms": 5000
    }
    
    move_response = requests.post(
        f'{base_url}/model/play', 
        headers=headers,
        json=move_request
    )
    print(f"Move request: {move_response.status_code}")
    print(f"Move response: {move_response.json()}")
    return health_response.status_code, move_response.status_code, move_response.json(), move_request["valid_moves"]

# Test your model
health, play, answer, valid = test_model_api(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else None)
if health != 200 or play != 200 or answer.get("move") not in valid or "thinking_time_ms" not in answer:
    sys.exit("model API test failed")
