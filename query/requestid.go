package query

import (
	"net/http"

	"github.com/google/uuid"
)

// maxRequestIDLen is the longest X-Request-Id accepted.
const maxRequestIDLen = 128

// resolveRequestID sets info's request id: the X-Request-Id sent when it
// is valid, else a generated UUID; badRequestID says why the one sent is
// invalid.
func resolveRequestID(info *requestInfo, h http.Header) {
	ids := h["X-Request-Id"]
	switch {
	case len(ids) > 1:
		info.badRequestID = "must be given at most once"
	case len(ids) == 1 && ids[0] != "":
		info.badRequestID = requestIDReason(ids[0])
		if info.badRequestID == "" {
			info.requestID = ids[0]
		}
	}
	if info.requestID == "" {
		info.requestID = uuid.NewString()
	}
	info.requestIDValue[0] = info.requestID
}

// requestIDReason returns why id is not an acceptable X-Request-Id, or "".
func requestIDReason(id string) string {
	if len(id) > maxRequestIDLen {
		return "must be at most 128 characters"
	}
	for i := 0; i < len(id); i++ {
		if id[i] < 0x21 || id[i] > 0x7e {
			return "must hold only visible ASCII characters"
		}
	}
	return ""
}

// checkRequestID answers 400 when the request's X-Request-Id is invalid
// (the answer echoes the generated id observe put in its place).
func checkRequestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if info := infoFrom(r.Context()); info != nil && info.badRequestID != "" {
			writeProblem(w, r, probInvalidParams, "The X-Request-Id header is invalid.",
				[]invalidParam{{Name: "X-Request-Id", Reason: info.badRequestID}})
			return
		}
		next.ServeHTTP(w, r)
	})
}
