#!/bin/sh
# deploy/gen-secrets.sh [DIR]: makes every secret of the secure set-up
# (deploy/README.md, "Security") into DIR (default deploy/compose/secrets,
# git-ignored). Files that exist are kept, so running it again is harmless;
# delete DIR to start over (then `docker compose down -v`: the JetStream
# store is encrypted with the old key).
#
#   ca.crt, ca.key           a private CA (10 years) that signs the rest
#   nats-tls/                NATS server: tls.crt (SANs: nats, nats-0..2.nats, nats-b,
#                            localhost, 127.0.0.1; server and client auth, so
#                            the cluster routes use it too), tls.key, ca.crt
#   lookupd/ accounting/ admin/ publisher/ leaf/
#                            NATS clients: tls.crt, tls.key (client cert,
#                            CN = user), ca.crt, password (clear, 48 hex);
#                            admin/nats.env: NATS_PASSWORD for the nats CLI;
#                            leaf/leaf.env: NATS_LEAF_URL, the link of region
#                            B's leaf node to region A (docs/two-regions.md)
#   nats.env                 for nats-server: NATS_<USER>_PASSWORD_HASH
#                            (bcrypt) and JS_KEY (JetStream encryption key)
#   lookupd-store/key        32 random bytes: LOOKUP_ENCRYPTION_KEY_FILE
#   lookupd-https/           lookupd's API certificate, also the accounting
#                            service's (SANs: lookupd, lookupd-audit,
#                            localhost, 127.0.0.1): tls.crt, tls.key, ca.crt
#
# Needs openssl (Debian: apt-get install openssl) and, for the bcrypt hashes,
# the nats CLI: bin/nats when `make images` built it, else the natscli image
# (NATSCLI_IMAGE, default lookup/natscli:v0.3.0) through docker.
# Extra server names: NATS_SANS="DNS:nats.example.com,IP:10.0.0.5".
set -eu

dir=${1:-$(dirname "$0")/compose/secrets}
natscli_image=${NATSCLI_IMAGE:-lookup/natscli:v0.3.0}
repo=$(cd "$(dirname "$0")/.." && pwd)
umask 077
mkdir -p "$dir"
chmod 700 "$dir"
cd "$dir"

# The directories are mounted into containers that run as user 65532:
# they and their files are readable by it; DIR itself (0700) keeps them
# from other users of this machine.
mkdirs() { for d in "$@"; do mkdir -p "$d"; chmod 755 "$d"; done; }

if [ ! -f ca.key ]; then
	openssl req -x509 -newkey rsa:3072 -sha256 -days 3650 -nodes \
		-keyout ca.key -out ca.crt -subj "/CN=lookup private CA" \
		-addext "basicConstraints=critical,CA:TRUE" \
		-addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null
fi

# cert NAME CN EKU SANS: NAME/tls.{crt,key} and NAME/ca.crt signed by the CA.
cert() {
	name=$1 cn=$2 eku=$3 sans=$4
	mkdirs "$name"
	[ -f "$name/tls.crt" ] && return 0
	ext=$(mktemp)
	{
		echo "basicConstraints=critical,CA:FALSE"
		echo "keyUsage=critical,digitalSignature,keyEncipherment"
		echo "extendedKeyUsage=$eku"
		[ -n "$sans" ] && echo "subjectAltName=$sans"
	} > "$ext"
	openssl req -newkey rsa:2048 -nodes -keyout "$name/tls.key" -out "$name/tls.csr" -subj "/CN=$cn" 2>/dev/null
	openssl x509 -req -in "$name/tls.csr" -CA ca.crt -CAkey ca.key -CAcreateserial \
		-days 825 -sha256 -extfile "$ext" -out "$name/tls.crt" 2>/dev/null
	rm -f "$name/tls.csr" "$ext"
	cp ca.crt "$name/ca.crt"
	chmod 644 "$name/tls.crt" "$name/tls.key" "$name/ca.crt"
}

nats_sans="DNS:nats,DNS:nats-0.nats,DNS:nats-1.nats,DNS:nats-2.nats,DNS:nats-b,DNS:localhost,IP:127.0.0.1"
[ -n "${NATS_SANS:-}" ] && nats_sans="$nats_sans,$NATS_SANS"
cert nats-tls nats "serverAuth,clientAuth" "$nats_sans"
cert lookupd-https lookupd serverAuth "DNS:lookupd,DNS:lookupd-audit,DNS:localhost,IP:127.0.0.1"

# bcrypt PASSWORD: its bcrypt hash (cost 11), by the nats CLI.
bcrypt() {
	if [ -x "$repo/bin/nats" ]; then
		PASSWORD=$1 "$repo/bin/nats" server passwd
	else
		PASSWORD=$1 docker run --rm -e PASSWORD --entrypoint /nats "$natscli_image" server passwd
	fi
}

env_new=
for user in admin lookupd accounting publisher leaf; do
	cert "$user" "$user" clientAuth ""
	if [ ! -f "$user/password" ]; then
		openssl rand -hex 24 > "$user/password"
		chmod 644 "$user/password"
		env_new=1
	fi
done
# The nats CLI of the compose stream jobs takes the password from NATS_PASSWORD.
if [ ! -f admin/nats.env ]; then
	echo "NATS_PASSWORD=$(cat admin/password)" > admin/nats.env
fi
# Region B's leaf node connects to region A's server "nats" as the user leaf
# (deploy/compose/nats-leaf.conf); the password is hex, so the URL needs no
# escaping.
if [ ! -f leaf/leaf.env ]; then
	echo "NATS_LEAF_URL=tls://leaf:$(cat leaf/password)@nats:7422" > leaf/leaf.env
fi

if [ -n "$env_new" ] || [ ! -f nats.env ]; then
	js_key=$(grep '^JS_KEY=' nats.env 2>/dev/null | cut -d= -f2 || true)
	[ -n "$js_key" ] || js_key=$(openssl rand -hex 32)
	{
		echo "# nats-server's secrets (made by deploy/gen-secrets.sh; never commit)."
		echo "# Single quotes: docker compose would expand the $ of a bcrypt hash."
		for user in admin lookupd accounting publisher leaf; do
			u=$(echo "$user" | tr '[:lower:]' '[:upper:]')
			echo "NATS_${u}_PASSWORD_HASH='$(bcrypt "$(cat "$user/password")" | tr -d '\r\n')'"
		done
		echo "JS_KEY=$js_key"
	} > nats.env.tmp
	mv nats.env.tmp nats.env
fi

mkdirs lookupd-store
if [ ! -f lookupd-store/key ]; then
	openssl rand -out lookupd-store/key 32
	chmod 644 lookupd-store/key
fi
# The files the containers read (user 65532): when run as root, owned by
# that user and readable by it alone (lookupd warns about key files others
# may read); otherwise they stay readable by all, inside the 0700 DIR.
if [ "$(id -u)" = 0 ]; then
	for f in nats-tls/tls.key lookupd/password lookupd/tls.key accounting/password accounting/tls.key lookupd-store/key lookupd-https/tls.key; do
		chown 65532:65532 "$f" && chmod 600 "$f"
	done
fi
echo "secrets in $dir"
