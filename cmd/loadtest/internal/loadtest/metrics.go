package loadtest

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// ReadMetrics reads the Prometheus text of /metrics on the admin listener
// at admin (a base URL) and returns the value of each of names that
// appears without labels (see ParseMetrics); a name absent from it is
// absent from the map.
func ReadMetrics(c *http.Client, admin string, names ...string) (map[string]float64, error) {
	resp, err := c.Get(admin + "/metrics")
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s/metrics: %s", admin, resp.Status)
	}
	return ParseMetrics(resp.Body, names...)
}

// ParseMetrics reads the Prometheus text format from r and returns the
// value of each of names that appears without labels (the first such
// line; "name value" or "name value timestamp"). A histogram's _count and
// _sum lines are such lines when it has no labels.
func ParseMetrics(r io.Reader, names ...string) (map[string]float64, error) {
	want := make(map[string]bool, len(names))
	for _, n := range names {
		want[n] = true
	}
	out := make(map[string]float64, len(names))
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 || !want[f[0]] {
			continue
		}
		if _, seen := out[f[0]]; seen {
			continue
		}
		if v, err := strconv.ParseFloat(f[1], 64); err == nil {
			out[f[0]] = v
		}
	}
	return out, sc.Err()
}
