package loadtest

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/lookup/persons/internal/testing/testkit"
)

func TestMeasureBrokerRTT(t *testing.T) {
	srv := testkit.RunNATS(t, testkit.NATSOptions(t.TempDir()))
	_, js := testkit.ConnectNATS(t, srv.ClientURL())
	tests := []struct {
		name    string
		n       int
		wantErr bool
	}{
		{name: "five of each", n: 5},
		{name: "none asked", n: 0, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			got, err := MeasureBrokerRTT(ctx, srv.ClientURL(), "LOADTEST_RTT_TEST", tt.n)
			if (err != nil) != tt.wantErr {
				t.Fatalf("MeasureBrokerRTT error = %v, want an error: %v", err, tt.wantErr)
			}
			if tt.wantErr {
				return
			}
			if got.N != tt.n || got.PublishAck <= 0 || got.Ping <= 0 {
				t.Errorf("MeasureBrokerRTT = %+v, want N %d and both round trips above 0", got, tt.n)
			}
			var names []string
			for name := range js.StreamNames(ctx).Name() {
				names = append(names, name)
			}
			if slices.Contains(names, "LOADTEST_RTT_TEST") {
				t.Errorf("streams after the measurement = %v, want the scratch stream deleted", names)
			}
		})
	}
}

func TestMedianDuration(t *testing.T) {
	tests := []struct {
		name string
		ds   []time.Duration
		want time.Duration
	}{
		{name: "none", want: 0},
		{name: "odd count, unsorted", ds: []time.Duration{5, 1, 3}, want: 3},
		{name: "even count: the upper", ds: []time.Duration{4, 1, 2, 3}, want: 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := medianDuration(tt.ds); got != tt.want {
				t.Errorf("medianDuration(%v) = %v, want %v", tt.ds, got, tt.want)
			}
		})
	}
}
