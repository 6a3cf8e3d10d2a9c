package natsconn

import (
	"errors"
	"testing"
)

func TestHealthFollowsRefusals(t *testing.T) {
	var h Health
	var cfg Config
	h.Follow(&cfg)
	if h.Refused() {
		t.Fatal("refused before any refusal")
	}
	cfg.OnRefused(errors.New("authorization violation"))
	if !h.Refused() {
		t.Error("not refused after OnRefused")
	}
	cfg.OnAccepted()
	if h.Refused() {
		t.Error("still refused after OnAccepted")
	}
}
