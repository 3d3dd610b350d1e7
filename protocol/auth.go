package protocol

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
)

// MatchCredential is hex(HMAC-SHA256(key = player's token, message = match_id)): the
// League Manager hands it to the assigned referee, which shows it to the player; the
// referee never learns the player's token and the credential is worthless elsewhere.
func MatchCredential(playerToken, matchID string) string {
	mac := hmac.New(sha256.New, []byte(playerToken))
	mac.Write([]byte(matchID))
	return hex.EncodeToString(mac.Sum(nil))
}

// TokenEqual compares secrets in constant time.
func TokenEqual(a, b string) bool {
	return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}
