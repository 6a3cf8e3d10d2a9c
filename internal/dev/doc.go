// Package dev is the dev mode of lookupd: everything "lookupd dev",
// "lookupd demo" and "lookupd token" need that a deployment never uses.
//
// Its contract: it sets up a whole environment on one machine with no
// set-up (StartEnv: a data directory, an in-process NATS JetStream server
// holding the deployed source stream, the demo data set published to it,
// the dev signing key and the JWKS of its public half), mints tokens with
// that key (Mint, MintN), and writes what the dev mode prints (the banner,
// WriteBanner; the demo data as JSON lines, WriteDemoLines; shell command
// lines, ShellQuote). The demo data are
// deterministic and go through the real event contract (events). Nothing
// here verifies a token or serves a request: cmd/lookupd wires the serve
// stack onto the environment. For development only.
package dev
