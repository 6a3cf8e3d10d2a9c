// Package testkit is the test support of this module, imported by test
// files only (and by the load tool): what many packages' tests need to
// run against real things without sleeping a guessed time.
//
// Its contract: a real nats-server with JetStream in the test's process
// (StartNATS, RunNATS, ConnectNATS, PersonsStream; NewNATSServer, tied to
// no test, for the load tool's brokers), an identity provider signing
// JWTs and serving their JWKS (NewRSAIssuer, NewECDSAIssuer), a
// throw-away certificate authority (NewCA), captured logs (JSONLogger,
// TextLogger), polling instead of sleeping (WaitFor, WaitUntil), the
// repository's own files (ReadRepoFile, RepoRoot), a load balancer and a
// steady load for rolling-restart tests (NewBalancer, StartLoad), the
// GETs of tests and of the load tool (HTTPGet), and the words of a shell
// command line (ShellSplit: the banner of "lookupd dev", the load tool's
// flags passed on to lookupd). Each helper ties what it starts to a
// testing.TB where it can, so that it ends with the test. It imports
// nothing of this module, so that any package's tests may use it.
package testkit
