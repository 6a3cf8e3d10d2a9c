# lookupd: a static binary on an empty base. Nothing is pulled.
#
# Build context (staged by `make images`, see the Makefile):
#   lookupd                  static binary (CGO_ENABLED=0)
#   ca-certificates.crt      CA bundle, so a JWKS can be fetched over HTTPS
#   passwd, group            the numeric non-root user 65532
#   data/                    an empty directory: scratch has no mkdir
FROM scratch
COPY passwd group /etc/
COPY ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY --chown=65532:65532 data/ /data/
COPY lookupd /lookupd
USER 65532:65532
WORKDIR /data
ENV LOOKUP_DATA_DIR=/data \
    LOOKUP_HTTP_ADDR=:8080 \
    LOOKUP_ADMIN_ADDR=:9090
VOLUME ["/data"]
# 8080: the HTTP API; 9090: /livez, /readyz, /metrics.
EXPOSE 8080 9090
ENTRYPOINT ["/lookupd"]
CMD ["serve"]
