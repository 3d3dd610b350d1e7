package tmpdeps

import (
	_ "github.com/google/uuid"
	_ "github.com/mattn/go-sqlite3"
	_ "github.com/rs/zerolog"
	_ "github.com/santhosh-tekuri/jsonschema/v5"
	_ "go.uber.org/goleak"
	_ "golang.org/x/time/rate"
	_ "gopkg.in/yaml.v3"
)
