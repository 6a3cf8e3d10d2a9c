package replica

import "testing"

// TestGenerationDrainWaitsForReaders: drain returns only once the last
// reader has released the generation, and a closing generation admits no
// new reader.
func TestGenerationDrainWaitsForReaders(t *testing.T) {
	g := newGeneration(t.TempDir(), nil, nil)
	for range 2 {
		if !g.acquire() {
			t.Fatal("acquire of an open generation = false")
		}
	}
	drained := make(chan struct{})
	go func() {
		g.drain()
		close(drained)
	}()
	g.release()
	select {
	case <-drained:
		t.Fatal("drain returned while a reader holds the generation")
	default:
	}
	// Once drain has marked it closing (it closes drained only after),
	// a new reader is turned away; until then it may still get in.
	for g.acquire() {
		g.release()
		select {
		case <-drained:
			t.Fatal("drain returned while a reader holds the generation")
		default:
		}
	}
	g.release()
	<-drained
	if g.acquire() {
		t.Error("acquire of a drained generation = true")
	}
	g.drain() // a second drain returns at once
}
