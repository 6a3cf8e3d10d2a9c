// Package signercheck is an example caller of lookupd: a small service
// that answers one question for a contact centre, "may the person on the
// line act for this consumer?", from the consumer's authorized signers.
//
// It shows the client as a caller uses it: the least protected data that
// answers the question (expand with ssn_mode=NONE: the date of birth, no
// SSN), a purpose for the disclosure ledger, read-your-writes with the
// position a publish returned, and problems told apart with errors.Is.
// Its tests use the in-process test server (lookuptest) and, with the
// build tag integration, the container module (lookupdcontainer).
package signercheck

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/lookup/persons/client"
)

// Need is what the claimant wants to do for the consumer.
type Need string

// The needs a signer's account access may cover.
const (
	NeedPHI     Need = "PHI"     // discuss protected health information
	NeedAccount Need = "ACCOUNT" // discuss PHI and update the account
)

// Claimant is who says they are on the line.
type Claimant struct {
	FirstName, LastName string
	DateOfBirth         string // YYYY-MM-DD
}

// Decision is the answer, and why.
type Decision struct {
	Allowed bool   `json:"allowed"`
	Reason  string `json:"reason"`
	// Position is the lookupd position the decision was read at: hand it
	// on, and the next reader sees at least what this one saw.
	Position uint64 `json:"position,string"`
}

// Checker decides with the signers lookupd knows.
type Checker struct {
	Lookup *client.Client
}

// purpose is recorded with each disclosure in lookupd's ledger.
const purpose = "caller-verification"

// MayAct decides whether c may do need for the consumer, reading at
// position minPos or later (0: any). A consumer lookupd does not know (or
// without signers) is a refusal, not an error.
func (ch Checker) MayAct(ctx context.Context, consumerID string, c Claimant, need Need, minPos uint64) (Decision, error) {
	res, err := ch.Lookup.AuthorizedSigners(ctx, consumerID, client.Expand(client.ProtectedPersonalData),
		client.SSN(client.SSNNone), client.Purpose(purpose), client.MinPosition(minPos))
	if errors.Is(err, client.ErrNotFound) {
		var p *client.Problem
		errors.As(err, &p)
		return Decision{Reason: "the consumer has no authorized signers", Position: p.Position}, nil
	}
	if err != nil {
		return Decision{}, err
	}
	d := Decision{Reason: "no authorized signer matches the claimant", Position: res.Meta.Position}
	for _, s := range res.Items {
		if !strings.EqualFold(s.FirstName, c.FirstName) || !strings.EqualFold(s.LastName, c.LastName) ||
			s.Protected == nil || s.Protected.DateOfBirth != c.DateOfBirth {
			continue
		}
		switch {
		case s.Status != client.SignerStatusActive:
			d.Reason = "the matching signer is " + strings.ToLower(string(s.Status))
		case !covers(s, need):
			d.Reason = "the matching signer's access does not cover " + string(need)
		default:
			return Decision{Allowed: true, Reason: "active " + strings.ToLower(strings.ReplaceAll(string(s.Type), "_", " ")), Position: d.Position}, nil
		}
	}
	return d, nil
}

// covers reports whether the signer's access covers need.
func covers(s client.AuthorizedSigner, need Need) bool {
	switch need {
	case NeedPHI:
		return s.HIPAAAuthorized && (s.AccountAccess == client.AccountAccessPHI || s.AccountAccess == client.AccountAccessPHIAndAccountUpdates)
	case NeedAccount:
		return s.HIPAAAuthorized && s.AccountAccess == client.AccountAccessPHIAndAccountUpdates
	}
	return false
}

// Handler serves GET /may-act?consumer_id=&first_name=&last_name=&need=
// with the date of birth in the header Claimant-Date-Of-Birth (never in a
// URL), and the least position in Lookup-Min-Position.
func (ch Checker) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		minPos, _ := strconv.ParseUint(r.Header.Get("Lookup-Min-Position"), 10, 64)
		d, err := ch.MayAct(r.Context(), q.Get("consumer_id"),
			Claimant{FirstName: q.Get("first_name"), LastName: q.Get("last_name"), DateOfBirth: r.Header.Get("Claimant-Date-Of-Birth")},
			Need(q.Get("need")), minPos)
		w.Header().Set("Cache-Control", "no-store")
		var ae *client.ArgumentError
		switch {
		case errors.As(err, &ae):
			http.Error(w, ae.Error(), http.StatusBadRequest)
			return
		case errors.Is(err, client.ErrPositionNotReached), errors.Is(err, client.ErrStale), errors.Is(err, client.ErrNotReady):
			w.Header().Set("Retry-After", "1")
			http.Error(w, "the signer registry is catching up; retry", http.StatusServiceUnavailable)
			return
		case err != nil:
			http.Error(w, "the signer registry failed", http.StatusBadGateway)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(d)
	})
}
