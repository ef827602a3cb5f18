#!/usr/bin/env python3
"""Webhook receiver with only the Python standard library (and, for Ed25519, the `cryptography` package).

Serve:   WEBHOOK_SECRET=whsec_... PORT=8443 python3 receiver.py
         WEBHOOK_SCHEME=ed25519 WEBHOOK_PUBLIC_KEY=whpk_... PORT=8443 python3 receiver.py   (public key only, no secret)
Options: WEBHOOK_SCHEME=standard-webhooks, HOST=0.0.0.0, TLS_CERT_FILE=cert.pem TLS_KEY_FILE=key.pem
Vectors: python3 receiver.py --vectors conformance/signature-vectors.json
"""
import base64
import hashlib
import hmac
import json
import os
import re
import ssl
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

TOLERANCE_SECONDS = int(os.environ.get("WEBHOOK_TOLERANCE_SECONDS", "300"))
MAX_BODY_BYTES = 1024 * 1024
SCHEME = os.environ.get("WEBHOOK_SCHEME", "x-service")  # or standard-webhooks, or ed25519
SCHEMES = ("x-service", "standard-webhooks", "ed25519")
SIGNATURE = re.compile(r"^v1=([0-9a-fA-F]{64})$")
TIMESTAMP = re.compile(r"^[0-9]{1,12}$")


def verify_signature(secret, timestamp, signature, raw_body, now_seconds, tolerance_seconds):
    """v1= + hex HMAC-SHA256 of b"<timestamp>." + raw body bytes, keyed with the whole whsec_ string as UTF-8."""
    if not timestamp or not TIMESTAMP.match(timestamp):
        return False
    if abs(now_seconds - int(timestamp)) > tolerance_seconds:
        return False
    received = SIGNATURE.match(signature or "")
    if not received:
        return False
    expected = hmac.new(secret.encode("utf-8"), timestamp.encode("ascii") + b"." + raw_body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, received.group(1).lower())


def standard_webhooks_key(secret):
    """The Standard Webhooks key: the bytes the base64 after whsec_ encodes (either alphabet, padding optional)."""
    encoded = secret[len("whsec_"):] if secret.startswith("whsec_") else secret
    encoded = encoded.replace("-", "+").replace("_", "/").rstrip("=")
    return base64.b64decode(encoded + "=" * (-len(encoded) % 4))


def verify_standard_webhook(secret, msg_id, timestamp, signatures, raw_body, now_seconds, tolerance_seconds):
    """Standard Webhooks, from the spec: webhook-signature holds space-separated "v1,<base64 HMAC-SHA256>" of
    b"<webhook-id>.<webhook-timestamp>." + raw body; any one matching is enough. The id is signed too."""
    if not msg_id or not timestamp or not signatures or not TIMESTAMP.match(timestamp):
        return False
    if abs(now_seconds - int(timestamp)) > tolerance_seconds:
        return False
    signed = f"{msg_id}.{timestamp}.".encode("utf-8") + raw_body
    expected = base64.b64encode(hmac.new(standard_webhooks_key(secret), signed, hashlib.sha256).digest())
    matches = [
        hmac.compare_digest(expected, signature.encode("utf-8"))  # bytes: a str with non-ASCII would raise
        for version, _, signature in (versioned.partition(",") for versioned in signatures.split(" "))
        if version == "v1"
    ]
    return any(matches)


def ed25519_public_key(whpk):
    """The webhook's public key as the settings API shows it (whpk_ + base64 of the raw 32 bytes). Python's standard
    library has no Ed25519: this uses the `cryptography` package (pip install cryptography, or Debian's
    python3-cryptography), imported only for this scheme."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    raw = base64.b64decode(whpk[len("whpk_"):] if whpk.startswith("whpk_") else whpk, validate=True)
    return Ed25519PublicKey.from_public_bytes(raw)  # raises unless it is 32 bytes


def verify_ed25519(public_key, msg_id, timestamp, signatures, raw_body, now_seconds, tolerance_seconds):
    """Standard Webhooks' asymmetric scheme with the public key alone: webhook-signature holds space-separated
    "v1a,<base64 Ed25519 signature>" of b"<webhook-id>.<webhook-timestamp>." + raw body (two during a key rotation;
    "v1," HMAC entries beside them are skipped); any one verifying is enough."""
    from cryptography.exceptions import InvalidSignature

    if not msg_id or not timestamp or not signatures or not TIMESTAMP.match(timestamp):
        return False
    if abs(now_seconds - int(timestamp)) > tolerance_seconds:
        return False
    signed = f"{msg_id}.{timestamp}.".encode("utf-8") + raw_body
    for version, _, encoded in (versioned.partition(",") for versioned in signatures.split(" ")):
        if version != "v1a":
            continue
        try:
            signature = base64.b64decode(encoded, validate=True)
            if len(signature) == 64:
                public_key.verify(signature, signed)  # raises InvalidSignature
                return True
        except (ValueError, InvalidSignature):
            continue
    return False


def parse_json_object(raw_body):
    """The body as a dict, or None for anything else (empty, invalid JSON or UTF-8, a list, a string, null, ...)."""
    try:
        event = json.loads(raw_body)
    except ValueError:  # JSONDecodeError and UnicodeDecodeError are both ValueErrors
        return None
    return event if isinstance(event, dict) else None


# In memory for the example; in production, a unique key on the event id in your database.
processed_event_ids = set()
processed_lock = threading.Lock()


def log(outcome, **fields):
    print(json.dumps({"outcome": outcome, **fields}), flush=True)


class WebhookHandler(BaseHTTPRequestHandler):
    def do_POST(self):
        if self.path != "/webhooks/funding":
            return self.answer(404, "not found")
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_BODY_BYTES:
            return self.answer(413, "too large")
        raw_body = self.rfile.read(length)  # the bytes as sent: verify these, never re-serialized JSON
        secret, now = os.environ.get("WEBHOOK_SECRET", ""), int(time.time())
        if SCHEME == "ed25519":
            event_id = self.headers.get("webhook-id", "")
            verified = verify_ed25519(
                PUBLIC_KEY,
                event_id,
                self.headers.get("webhook-timestamp"),
                self.headers.get("webhook-signature"),
                raw_body,
                now,
                TOLERANCE_SECONDS,
            )
        elif SCHEME == "standard-webhooks":
            event_id = self.headers.get("webhook-id", "")
            verified = verify_standard_webhook(
                secret,
                event_id,
                self.headers.get("webhook-timestamp"),
                self.headers.get("webhook-signature"),
                raw_body,
                now,
                TOLERANCE_SECONDS,
            )
        else:
            event_id = self.headers.get("X-Service-Event-Id", "")
            verified = verify_signature(
                secret,
                self.headers.get("X-Service-Timestamp"),
                self.headers.get("X-Service-Signature"),
                raw_body,
                now,
                TOLERANCE_SECONDS,
            )
        if not verified:
            log("rejected", eventId=event_id)
            return self.answer(400, "bad signature")
        # Parse only what verified; 400 (not 500) to a body that is not a JSON object: retrying will not fix it.
        event = parse_json_object(raw_body)
        if event is None:
            log("malformed", eventId=event_id)
            return self.answer(400, "body is not a JSON object")
        with processed_lock:
            if event_id in processed_event_ids:
                log("duplicate", eventId=event_id)
                return self.answer(200, "duplicate")
            # Your processing goes here.
            processed_event_ids.add(event_id)
        log("processed", eventId=event_id, type=event.get("type"), userId=event.get("userId"))
        self.answer(200, "processed")

    def answer(self, status, text):
        body = text.encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass  # one JSON line per delivery instead of the access log


def verify_vector(scheme, vector):
    headers, body = vector["headers"], base64.b64decode(vector["body"]["base64"])
    if scheme == "ed25519":
        return verify_ed25519(
            ed25519_public_key(vector["publicKey"]),
            headers.get("webhook-id"),
            headers.get("webhook-timestamp"),
            headers.get("webhook-signature"),
            body,
            vector["now"],
            vector["toleranceSeconds"],
        )
    if scheme == "standard-webhooks":
        return verify_standard_webhook(
            vector["secret"],
            headers.get("webhook-id"),
            headers.get("webhook-timestamp"),
            headers.get("webhook-signature"),
            body,
            vector["now"],
            vector["toleranceSeconds"],
        )
    return verify_signature(
        vector["secret"],
        headers.get("X-Service-Timestamp"),
        headers.get("X-Service-Signature"),
        body,
        vector["now"],
        vector["toleranceSeconds"],
    )


def run_vectors(path):
    with open(path, encoding="utf-8") as file:
        document = json.load(file)
    failed_in_all = 0
    for scheme, vectors in (
        ("x-service", document["vectors"]),
        ("standard-webhooks", document["standardWebhooks"]["vectors"]),
        ("ed25519", document["standardWebhooksEd25519"]["vectors"]),
    ):
        failed = 0
        for vector in vectors:
            verdict = "accept" if verify_vector(scheme, vector) else "reject"
            ok = verdict == vector["expected"]
            failed += 0 if ok else 1
            print(f"{'ok  ' if ok else 'FAIL'} {vector['name']}: {verdict} (expected {vector['expected']}, {vector['reason']})")
        print(f"{len(vectors) - failed}/{len(vectors)} {scheme} vectors passed")
        failed_in_all += failed
    return 0 if failed_in_all == 0 else 1


PUBLIC_KEY = None


def serve():
    global PUBLIC_KEY
    if SCHEME not in SCHEMES:
        sys.exit("WEBHOOK_SCHEME is x-service, standard-webhooks or ed25519")
    if SCHEME == "ed25519":
        try:
            PUBLIC_KEY = ed25519_public_key(os.environ.get("WEBHOOK_PUBLIC_KEY", ""))
        except ImportError:
            sys.exit("WEBHOOK_SCHEME=ed25519 needs the cryptography package: pip install cryptography")
        except ValueError:
            sys.exit("Set WEBHOOK_PUBLIC_KEY to the whpk_... public key the settings API shows")
    secret = os.environ.get("WEBHOOK_SECRET")
    if not secret and SCHEME != "ed25519":
        sys.exit("Set WEBHOOK_SECRET to the whsec_... secret shown when you enabled the webhook")
    if SCHEME == "standard-webhooks":
        standard_webhooks_key(secret)  # fails now, not on the first delivery, if the secret is not base64
    # 127.0.0.1: only this machine can reach it; HOST=0.0.0.0 takes requests from the network.
    host, port = os.environ.get("HOST") or "127.0.0.1", int(os.environ.get("PORT", "8443"))
    server = ThreadingHTTPServer((host, port), WebhookHandler)
    cert, key = os.environ.get("TLS_CERT_FILE"), os.environ.get("TLS_KEY_FILE")
    if cert and key:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert, key)
        server.socket = context.wrap_socket(server.socket, server_side=True)
    bound_host, bound_port = server.server_address[:2]
    print(f"listening on {'https' if cert and key else 'http'}://{bound_host}:{bound_port}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    if "--vectors" in sys.argv:
        sys.exit(run_vectors(sys.argv[sys.argv.index("--vectors") + 1]))
    serve()
