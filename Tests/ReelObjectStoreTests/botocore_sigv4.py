#!/usr/bin/env python3
"""The independent SigV4 reference for SigV4SignerTests: botocore, Python's AWS SDK, signs the
same requests the Swift signer signs, and prints what it computed.

Reads a JSON array of cases on stdin, writes a JSON array of results (same order) on stdout.
A case: {"kind": "sign" | "presign" | "client-presign", "method", "endpoint", "bucket", "key"
(null for a bucket-level request), "query": {}, "headers": {}, "body_hex", "unsigned_payload",
"timestamp": "YYYYMMDDTHHMMSSZ", "access_key", "secret_key", "token", "region", "expires",
"operation", "params"}.

- "sign": botocore.auth.S3SigV4Auth signs an AWSRequest (Authorization header). The URL path is
  built as botocore's REST serializer builds it (utils.percent_encode; the key is the greedy
  label, encoded with safe='/~'); the payload hash is botocore's own SHA-256 of the body.
- "presign": botocore.auth.S3SigV4QueryAuth presigns the same kind of AWSRequest.
- "client-presign": a real botocore S3 client (path-style, s3v4) runs generate_presigned_url
  for an operation and its parameters, so even the URL is built by the SDK.
The clock is botocore's own get_current_datetime, fixed to the case's timestamp.
"""
import datetime
import json
import sys

import botocore.auth
import botocore.session
from botocore.auth import S3SigV4Auth, S3SigV4QueryAuth
from botocore.awsrequest import AWSRequest
from botocore.config import Config
from botocore.credentials import Credentials
from botocore.utils import percent_encode


def fixed_clock(timestamp):
    instant = datetime.datetime.strptime(timestamp, "%Y%m%dT%H%M%SZ")
    botocore.auth.get_current_datetime = lambda *args, **kwargs: instant


def recording(cls):
    """A signer class that keeps the canonical request and string to sign it computed."""

    class Recording(cls):
        def string_to_sign(self, request, canonical_request):
            self.recorded_canonical_request = canonical_request
            self.recorded_string_to_sign = super().string_to_sign(request, canonical_request)
            return self.recorded_string_to_sign

    return Recording


def url_of(case):
    path = "/" + percent_encode(case["bucket"])
    if case.get("key") is not None:
        path += "/" + percent_encode(case["key"], safe="/~")
    return case["endpoint"] + path


def credentials(case):
    return Credentials(case["access_key"], case["secret_key"], case.get("token"))


def sign(case):
    body = bytes.fromhex(case.get("body_hex") or "")
    request = AWSRequest(method=case["method"], url=url_of(case), headers=dict(case.get("headers", {})),
                         data=body, params=dict(case.get("query", {})))
    signer_class = recording(S3SigV4Auth)
    if case.get("unsigned_payload"):
        class Unsigned(signer_class):
            def _should_sha256_sign_payload(self, request):
                return False
        signer_class = Unsigned
    signer = signer_class(credentials(case), "s3", case["region"])
    signer.add_auth(request)
    return {
        "canonical_request": signer.recorded_canonical_request,
        "string_to_sign": signer.recorded_string_to_sign,
        "headers": {name.lower(): value for name, value in request.headers.items()},
    }


def presign(case):
    request = AWSRequest(method=case["method"], url=url_of(case), headers=dict(case.get("headers", {})),
                         params=dict(case.get("query", {})))
    signer = recording(S3SigV4QueryAuth)(credentials(case), "s3", case["region"], expires=case["expires"])
    signer.add_auth(request)
    return {
        "canonical_request": signer.recorded_canonical_request,
        "string_to_sign": signer.recorded_string_to_sign,
        "url": request.url,
    }


def client_presign(case):
    session = botocore.session.get_session()
    client = session.create_client(
        "s3", endpoint_url=case["endpoint"], region_name=case["region"],
        aws_access_key_id=case["access_key"], aws_secret_access_key=case["secret_key"],
        aws_session_token=case.get("token"),
        config=Config(signature_version="s3v4", s3={"addressing_style": "path"}))
    url = client.generate_presigned_url(case["operation"], Params=case["params"], ExpiresIn=case["expires"],
                                        HttpMethod=case["method"])
    return {"url": url}


def main():
    results = []
    for case in json.load(sys.stdin):
        fixed_clock(case["timestamp"])
        kind = case["kind"]
        if kind == "sign":
            results.append(sign(case))
        elif kind == "presign":
            results.append(presign(case))
        elif kind == "client-presign":
            results.append(client_presign(case))
        else:
            raise SystemExit(f"unknown case kind {kind!r}")
    json.dump(results, sys.stdout)


if __name__ == "__main__":
    main()
