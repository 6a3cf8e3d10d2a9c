# The STAND-IN identity provider of examples/officer-sso (on mockoidc), for
# development and tests only, NEVER production: it signs in whoever picks a
# name, without a password. Used by compose/officer.yaml.
#
# Build context (staged by `make officer-images`):
#   officer-sso              static binary (CGO_ENABLED=0)
#   passwd, group            the numeric non-root user 65532
FROM scratch
COPY passwd group /etc/
COPY officer-sso /officer-sso
USER 65532:65532
EXPOSE 9000
ENTRYPOINT ["/officer-sso"]
CMD ["--help"]
