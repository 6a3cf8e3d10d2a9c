package main

import (
	"html/template"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/golang-jwt/jwt/v5"
	"github.com/oauth2-proxy/mockoidc"
)

// groupScopes maps a group to the scopes its members' ID tokens carry in
// scp: the mapping a real identity provider is configured with (a role
// or group mapper to the claim scp: docs/audit.md, "Sign-in").
var groupScopes = map[string][]string{"privacy-officers": {"read:audit"}}

// users are whom the login page offers.
var users = []*user{
	{MockUser: &mockoidc.MockUser{Subject: "officer", Email: "officer@example.test", EmailVerified: true,
		PreferredUsername: "officer", Groups: []string{"privacy-officers"}},
		about: "a privacy officer: group privacy-officers, so the scope read:audit"},
	{MockUser: &mockoidc.MockUser{Subject: "clerk", Email: "clerk@example.test", EmailVerified: true,
		PreferredUsername: "clerk", Groups: []string{"billing"}},
		about: "not an officer: group billing, no scope (the pages answer 403)"},
}

// user is a mockoidc user whose ID token also carries azp and the scopes
// of its groups.
type user struct {
	*mockoidc.MockUser
	about string
}

// idClaims are the claims of an ID token the stand-in signs.
type idClaims struct {
	*mockoidc.IDTokenClaims
	AuthorizedParty   string   `json:"azp,omitempty"`
	Email             string   `json:"email,omitempty"`
	EmailVerified     bool     `json:"email_verified,omitempty"`
	PreferredUsername string   `json:"preferred_username,omitempty"`
	Groups            []string `json:"groups,omitempty"`
	Scp               []string `json:"scp,omitempty"`
}

// Claims implements mockoidc.User.
func (u *user) Claims(_ []string, base *mockoidc.IDTokenClaims) (jwt.Claims, error) {
	c := &idClaims{IDTokenClaims: base, Email: u.Email, EmailVerified: u.EmailVerified,
		PreferredUsername: u.PreferredUsername, Groups: u.Groups, Scp: u.scopes()}
	if len(base.Audience) == 1 {
		c.AuthorizedParty = base.Audience[0]
	}
	return c, nil
}

// scopes returns the scopes of u's groups.
func (u *user) scopes() []string {
	var out []string
	for _, g := range u.Groups {
		out = append(out, groupScopes[g]...)
	}
	return out
}

func findUser(name string) *user {
	for _, u := range users {
		if u.Subject == name {
			return u
		}
	}
	return nil
}

// userList describes the users for the start-up line.
func userList() string {
	var parts []string
	for _, u := range users {
		s := strings.Join(u.scopes(), " ")
		if s == "" {
			s = "no scope"
		}
		parts = append(parts, u.Subject+" ("+s+")")
	}
	return strings.Join(parts, ", ")
}

// loginPage puts a login page in front of m's authorization endpoint: a
// request without the parameter login is answered with a page offering
// the users, whose buttons send the same request again with login set;
// with it, that user is the one mockoidc signs in. Logins take turns, so
// that each pops the user it queued.
func loginPage(m *mockoidc.MockOIDC) func(http.Handler) http.Handler {
	var mu sync.Mutex
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != mockoidc.AuthorizationEndpoint {
				next.ServeHTTP(w, r)
				return
			}
			if err := r.ParseForm(); err != nil {
				http.Error(w, "malformed request", http.StatusBadRequest)
				return
			}
			w.Header().Set("Cache-Control", "no-store")
			w.Header().Set("Referrer-Policy", "no-referrer")
			name := r.Form.Get("login")
			if name == "" {
				params := url.Values{}
				for k, v := range r.Form {
					if k != "login" {
						params[k] = v
					}
				}
				showLogin(w, params)
				return
			}
			u := findUser(name)
			if u == nil {
				http.Error(w, "no such user", http.StatusBadRequest)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			m.QueueUser(u)
			next.ServeHTTP(w, r)
			// A request mockoidc refused left its user queued: drop it.
			m.UserQueue.Lock()
			m.UserQueue.Queue = nil
			m.UserQueue.Unlock()
		})
	}
}

var loginTemplate = template.Must(template.New("login").Parse(`<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Sign in (development stand-in)</title></head>
<body>
<h1>Sign in: development identity provider</h1>
<p><strong>A stand-in for development and tests, never production:</strong> pick who signs in; there is no password.</p>
<form method="get" action="{{.Action}}">
{{range $name, $values := .Params}}{{range $values}}<input type="hidden" name="{{$name}}" value="{{.}}">
{{end}}{{end}}{{range .Users}}<p><button type="submit" name="login" value="{{.Subject}}">{{.Subject}}</button> {{.About}}</p>
{{end}}</form>
</body>
</html>
`))

// showLogin writes the login page for the authorization request params.
func showLogin(w http.ResponseWriter, params url.Values) {
	type entry struct{ Subject, About string }
	var list []entry
	for _, u := range users {
		list = append(list, entry{u.Subject, u.about})
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	err := loginTemplate.Execute(w, struct {
		Action string
		Params url.Values
		Users  []entry
	}{mockoidc.AuthorizationEndpoint, params, list})
	if err != nil {
		http.Error(w, "login page", http.StatusInternalServerError)
	}
}
