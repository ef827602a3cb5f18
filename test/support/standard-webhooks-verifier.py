"""A Standard Webhooks verifier written from the specification (https://www.standardwebhooks.com) with Python's
standard library only: the official `standardwebhooks` package is on PyPI, which CI cannot reach.

Reads JSON cases from stdin: [{"secret", "headers", "body_base64", "now", "tolerance"}], prints one verdict per case
("accept" or "reject") as a JSON list.
"""
import base64
import hashlib
import hmac
import json
import sys


def verify(secret, headers, body, now, tolerance):
    headers = {name.lower(): value for name, value in headers.items()}
    msg_id = headers.get("webhook-id")
    timestamp = headers.get("webhook-timestamp")
    signatures = headers.get("webhook-signature")
    if not msg_id or not timestamp or not signatures:
        return False
    try:
        ts = int(timestamp)
    except ValueError:
        return False
    if abs(now - ts) > tolerance:
        return False
    key = base64.b64decode(secret[len("whsec_"):] if secret.startswith("whsec_") else secret)
    signed = msg_id.encode() + b"." + timestamp.encode() + b"." + body
    expected = base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
    for versioned in signatures.split(" "):
        version, _, signature = versioned.partition(",")
        if version == "v1" and hmac.compare_digest(signature, expected):
            return True
    return False


cases = json.load(sys.stdin)
print(json.dumps([
    "accept" if verify(c["secret"], c["headers"], base64.b64decode(c["body_base64"]), c["now"], c["tolerance"]) else "reject"
    for c in cases
]))
