# oauth2-proxy, the OIDC proxy in front of the privacy officer's pages
# (compose/officer.yaml), built from its Go module at the version that
# examples/officer-sso/go.mod pins (a tool directive), on an empty base.
# Nothing is pulled. Real deployments may use the upstream image instead
# (OFFICER_PROXY_IMAGE); the settings (OAUTH2_PROXY_*) work with both.
#
# Build context (staged by `make officer-images`):
#   oauth2-proxy             static binary (CGO_ENABLED=0)
#   ca-certificates.crt      CA bundle, for an identity provider over HTTPS
#   passwd, group            the numeric non-root user 65532
FROM scratch
COPY passwd group /etc/
COPY ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY oauth2-proxy /oauth2-proxy
USER 65532:65532
# 4180: the proxy (OAUTH2_PROXY_HTTP_ADDRESS).
EXPOSE 4180
ENTRYPOINT ["/oauth2-proxy"]
