# The real `nats` CLI (github.com/nats-io/natscli), built from its Go module
# outside this one, on an empty base, with the stream definitions of
# deploy/streams baked in under /streams. Used as a one-shot job that applies
# the streams (compose services `stream-persons` and `stream-dlq`, the Kubernetes Job).
#
# Build context (staged by `make images`):
#   nats                     static binary (CGO_ENABLED=0)
#   passwd, group            the numeric non-root user 65532
#   streams/                 deploy/streams/*.json
FROM scratch
COPY passwd group /etc/
COPY nats /nats
COPY streams/ /streams/
USER 65532:65532
ENTRYPOINT ["/nats"]
CMD ["--help"]
