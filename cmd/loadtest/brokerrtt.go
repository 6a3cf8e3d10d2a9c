package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"

	"github.com/lookup/persons/cmd/loadtest/internal/loadtest"
)

// rttCommand is the first argument that makes loadtest measure the
// broker's round trip and print it: the parent runs itself with it, so
// that the round trip is a client's in a process of its own, as lookupd
// is. Measured from the tool's own process, which runs the NATS server,
// a publish and its acknowledgement never leave one Go runtime: a
// fraction of what a separate process waits (24 µs against 80-90 µs on
// the 2-vCPU machine of docs/performance.md).
const rttCommand = "broker-rtt"

// runRTT is "loadtest broker-rtt --url U --stream S --n N": it measures
// the round trips of the NATS server at U (loadtest.MeasureBrokerRTT) and
// prints them on stdout as one JSON object.
func runRTT(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet(rttCommand, flag.ContinueOnError)
	url := fs.String("url", "", "NATS server URL")
	stream := fs.String("stream", rttStream, "scratch stream, created and deleted")
	n := fs.Int("n", rttSamples, "round trips of each kind")
	if err := fs.Parse(args); err != nil {
		return err
	}
	rtt, err := loadtest.MeasureBrokerRTT(ctx, *url, *stream, *n)
	if err != nil {
		return err
	}
	return json.NewEncoder(stdout).Encode(rtt)
}

// measureRTTApart runs this program as "broker-rtt" against the NATS
// server at url and returns what it measured.
func measureRTTApart(ctx context.Context, url, stream string, n int) (loadtest.BrokerRTT, error) {
	self, err := os.Executable()
	if err != nil {
		return loadtest.BrokerRTT{}, err
	}
	var out, errOut bytes.Buffer
	cmd := exec.CommandContext(ctx, self, rttCommand, "--url", url, "--stream", stream, "--n", strconv.Itoa(n)) //nolint:gosec // G204: this program
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return loadtest.BrokerRTT{}, fmt.Errorf("broker round trip (%s): %w: %s", rttCommand, err, bytes.TrimSpace(errOut.Bytes()))
	}
	var rtt loadtest.BrokerRTT
	if err := json.Unmarshal(out.Bytes(), &rtt); err != nil {
		return loadtest.BrokerRTT{}, fmt.Errorf("broker round trip (%s) printed %q: %w", rttCommand, out.Bytes(), err)
	}
	return rtt, nil
}
