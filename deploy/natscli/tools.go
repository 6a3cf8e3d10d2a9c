//go:build tools

package tools

import _ "github.com/nats-io/natscli/nats"
