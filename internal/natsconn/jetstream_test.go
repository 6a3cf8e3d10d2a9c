package natsconn

import (
	"errors"
	"testing"
)

func TestWithJetStreamPassesTheConnectError(t *testing.T) {
	want := errors.New("refused")
	nc, js, err := WithJetStream(nil, want)
	if !errors.Is(err, want) || nc != nil || js != nil {
		t.Errorf("got %v, %v, %v, want nil, nil, %v", nc, js, err, want)
	}
}
