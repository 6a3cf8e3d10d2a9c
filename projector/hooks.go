package projector

// testHooks are the points where the package's tests step into a Store or
// a Projector: to fail it there as a broken disk or consumer would, or to
// watch it. Only the option functions below set them, and only the tests
// call those (through open and newProjector); in production every hook is
// nil and each method below does nothing.
type testHooks struct {
	// applyFault (Store) is called before each write transaction; an error
	// it returns fails the transaction as a store failure would.
	applyFault func() error
	// afterCommit (Projector) is called after each committed batch with the
	// new checkpoint.
	afterCommit func(seq uint64)
	// readFault (Projector) is called with each message's stream sequence;
	// an error fails the read there, as a broken consumer would.
	readFault func(seq uint64) error
	// ensureDLQ (Projector) is called as ensureDLQ starts.
	ensureDLQ func()
}

// option sets a test hook of open or newProjector.
type option func(*testHooks)

func withApplyFault(f func() error) option      { return func(h *testHooks) { h.applyFault = f } }
func withAfterCommit(f func(seq uint64)) option { return func(h *testHooks) { h.afterCommit = f } }
func withReadFault(f func(uint64) error) option { return func(h *testHooks) { h.readFault = f } }
func withEnsureDLQHook(f func()) option         { return func(h *testHooks) { h.ensureDLQ = f } }

// newTestHooks returns the hooks that opts set.
func newTestHooks(opts []option) testHooks {
	var h testHooks
	for _, o := range opts {
		o(&h)
	}
	return h
}

// beforeWrite runs the applyFault hook, if any.
func (h *testHooks) beforeWrite() error {
	if h.applyFault == nil {
		return nil
	}
	return h.applyFault()
}

// committed runs the afterCommit hook, if any.
func (h *testHooks) committed(seq uint64) {
	if h.afterCommit != nil {
		h.afterCommit(seq)
	}
}

// read runs the readFault hook, if any, for the message at stream
// sequence seq.
func (h *testHooks) read(seq uint64) error {
	if h.readFault == nil {
		return nil
	}
	return h.readFault(seq)
}

// ensuringDLQ runs the ensureDLQ hook, if any.
func (h *testHooks) ensuringDLQ() {
	if h.ensureDLQ != nil {
		h.ensureDLQ()
	}
}
