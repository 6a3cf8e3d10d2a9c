package loadtest

// MiB is a mebibyte: memory figures of a soak are in MiB.
const MiB = 1 << 20

// SoakSummary is what the memory samples of a soak come to.
type SoakSummary struct {
	First, Peak, End MemSample // Peak: the sample of highest RSS (the first of equals)
}

// Growth is the RSS at the end less the RSS at the start.
func (s SoakSummary) Growth() int64 { return s.End.RSS - s.First.RSS }

// Summarize returns the summary of samples, in time order; ok is false
// when there are none.
func Summarize(samples []MemSample) (s SoakSummary, ok bool) {
	if len(samples) == 0 {
		return s, false
	}
	s.First, s.Peak, s.End = samples[0], samples[0], samples[len(samples)-1]
	for _, m := range samples[1:] {
		if m.RSS > s.Peak.RSS {
			s.Peak = m
		}
	}
	return s, true
}
