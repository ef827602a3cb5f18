#!/usr/bin/env python3
"""Webhook receiver with only the Python standard library.

Serve:   WEBHOOK_SECRET=whsec_... PORT=8443 [TLS_CERT_FILE=cert.pem TLS_KEY_FILE=key.pem] python3 receiver.py
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
        event_id = self.headers.get("X-Service-Event-Id", "")
        verified = verify_signature(
            os.environ["WEBHOOK_SECRET"],
            self.headers.get("X-Service-Timestamp"),
            self.headers.get("X-Service-Signature"),
            raw_body,
            int(time.time()),
            TOLERANCE_SECONDS,
        )
        if not verified:
            log("rejected", eventId=event_id)
            return self.answer(400, "bad signature")
        with processed_lock:
            if event_id in processed_event_ids:
                log("duplicate", eventId=event_id)
                return self.answer(200, "duplicate")
            event = json.loads(raw_body)
            # Your processing goes here.
            processed_event_ids.add(event_id)
        log("processed", eventId=event_id, type=event["type"], userId=event["userId"])
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


def run_vectors(path):
    with open(path, encoding="utf-8") as file:
        vectors = json.load(file)["vectors"]
    failed = 0
    for vector in vectors:
        headers = vector["headers"]
        accepted = verify_signature(
            vector["secret"],
            headers.get("X-Service-Timestamp"),
            headers.get("X-Service-Signature"),
            base64.b64decode(vector["body"]["base64"]),
            vector["now"],
            vector["toleranceSeconds"],
        )
        verdict = "accept" if accepted else "reject"
        ok = verdict == vector["expected"]
        failed += 0 if ok else 1
        print(f"{'ok  ' if ok else 'FAIL'} {vector['name']}: {verdict} (expected {vector['expected']}, {vector['reason']})")
    print(f"{len(vectors) - failed}/{len(vectors)} vectors passed")
    return 0 if failed == 0 else 1


def serve():
    if not os.environ.get("WEBHOOK_SECRET"):
        sys.exit("Set WEBHOOK_SECRET to the whsec_... secret shown when you enabled the webhook")
    port = int(os.environ.get("PORT", "8443"))
    server = ThreadingHTTPServer(("0.0.0.0", port), WebhookHandler)
    cert, key = os.environ.get("TLS_CERT_FILE"), os.environ.get("TLS_KEY_FILE")
    if cert and key:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert, key)
        server.socket = context.wrap_socket(server.socket, server_side=True)
    print(f"listening on {'https' if cert and key else 'http'}://127.0.0.1:{port}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    if "--vectors" in sys.argv:
        sys.exit(run_vectors(sys.argv[sys.argv.index("--vectors") + 1]))
    serve()
