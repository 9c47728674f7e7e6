"""Fake secrets in their real formats, and look-alikes that are not secrets.

Generated from a fixed seed at import, so the repository holds no literal token a secret scanner
would (rightly) complain about, and every run sees the same values. Each entry is the text as it
would sit in a file or a log, and the exact substring that must never leave redacted.
"""

from __future__ import annotations

import base64
import hashlib
import json
import string
import uuid

from tests.corpus_common import ALNUM, B64, HEX, RNG, UPPER32, URLSAFE, Sample, rand
from tests.corpus_common import pem as _pem
from tests.corpus_lookalikes import lookalikes as more_lookalikes
from tests.corpus_secrets import secrets as more_secrets


def _jwt() -> str:
    def enc(obj: dict[str, object]) -> str:
        return base64.urlsafe_b64encode(json.dumps(obj).encode()).decode().rstrip("=")

    sig = rand(URLSAFE, 43)
    header, body = (
        enc({"alg": "HS256", "typ": "JWT"}),
        enc({"sub": "1234567890", "name": "Jane", "iat": 1716239022}),
    )
    return f"{header}.{body}.{sig}"


def provider_secrets() -> list[Sample]:
    openai = f"sk-proj-{rand(URLSAFE, 58)}T3BlbkFJ{rand(URLSAFE, 58)}"
    anthropic = f"sk-ant-api03-{rand(URLSAFE, 93)}AA"
    aws_id = "AKIA" + rand(UPPER32, 16)
    aws_secret = rand(B64, 40)
    ghp = "ghp_" + rand(ALNUM, 36)
    gh_fine = f"github_pat_{rand(ALNUM, 22)}_{rand(ALNUM, 59)}"
    glpat = "glpat-" + rand(URLSAFE, 20)
    slack = f"xoxb-{rand(string.digits, 12)}-{rand(string.digits, 13)}-{rand(ALNUM, 24)}"
    stripe = "sk_live_" + rand(ALNUM, 99)
    google = "AIza" + rand(URLSAFE, 35)
    rsa = _pem("RSA PRIVATE KEY")
    openssh = _pem("OPENSSH PRIVATE KEY", 4)
    service_key = _pem("PRIVATE KEY", 3)
    jwt = _jwt()
    pg_pass = rand(ALNUM, 10) + "!x9"
    mongo_pass = rand(ALNUM, 16)
    log_token = rand(ALNUM, 32)
    bearer = rand(URLSAFE, 40)
    env_pass = "Tr0ub4dor&3-" + rand(ALNUM, 6)
    npm = "npm_" + rand(ALNUM, 36)
    sendgrid = f"SG.{rand(URLSAFE, 22)}.{rand(URLSAFE, 43)}"
    hf = "hf_" + rand(string.ascii_letters, 34)
    azure = rand(B64, 86) + "=="
    pypi = "pypi-AgEIcHlwaS5vcmc" + rand(URLSAFE, 70)
    telegram = f"{rand(string.digits, 9)}:AA{rand(URLSAFE, 33)}"
    twilio = "SK" + rand(HEX, 32)
    basic_pass = rand(ALNUM, 14)
    django = rand(ALNUM + "!@#%^&*(-_=+)", 50).replace("(", "@").replace(")", "#")
    digitalocean = "dop_v1_" + rand(HEX, 64)
    return [
        Sample("openai-api-key", f"OPENAI_API_KEY={openai}", openai),
        Sample("anthropic-api-key", f'export ANTHROPIC_API_KEY="{anthropic}"', anthropic),
        Sample("aws-access-key", f"[default]\naws_access_key_id = {aws_id}", aws_id),
        Sample("aws-secret-key", f"aws_secret_access_key = {aws_secret}", aws_secret),
        Sample(
            "github-token",
            f"git remote set-url origin https://x-access-token:{ghp}@github.com/acme/api.git",
            ghp,
        ),
        Sample("github-fine-grained-token", f"GH_TOKEN: {gh_fine}", gh_fine),
        Sample("gitlab-token", f'gitlab_token = "{glpat}"', glpat),
        Sample("slack-token", f"slack:\n  bot_token: {slack}", slack),
        Sample("stripe-key", f"Stripe.api_key = '{stripe}'", stripe),
        Sample("google-api-key", f'<meta name="maps-key" content="{google}">', google),
        Sample("rsa-private-key", rsa, rsa.splitlines()[3]),
        Sample("openssh-private-key", openssh, openssh.splitlines()[2]),
        Sample(
            "service-account-json",
            json.dumps({"type": "service_account", "private_key": service_key + "\n"}),
            service_key.splitlines()[1],
        ),
        Sample("jwt", f"Cookie: session={jwt}; Path=/", jwt.split(".")[2]),
        Sample("postgres-url", f"DATABASE_URL=postgres://app:{pg_pass}@db.internal:5432/app", pg_pass),
        Sample(
            "mongodb-url",
            f'mongo "mongodb+srv://admin:{mongo_pass}@cluster0.ab1cd.mongodb.net/prod"',
            mongo_pass,
        ),
        Sample(
            "log-token",
            f"2024-05-01T10:00:00Z INFO request ok user=42 token={log_token} took=12ms",
            log_token,
        ),
        Sample("bearer-header", f"> GET /v1/me HTTP/1.1\n> Authorization: Bearer {bearer}", bearer),
        Sample("dotenv-password", f"DB_HOST=localhost\nDB_PASSWORD={env_pass}\n", env_pass),
        Sample("npm-token", f"//registry.npmjs.org/:_authToken={npm}", npm),
        Sample("sendgrid-key", f"SENDGRID_API_KEY='{sendgrid}'", sendgrid),
        Sample("huggingface-token", f"huggingface-cli login --token {hf}", hf),
        Sample(
            "azure-storage-key",
            "DefaultEndpointsProtocol=https;AccountName=acme;"
            f"AccountKey={azure};EndpointSuffix=core.windows.net",
            azure,
        ),
        Sample("pypi-token", f"[pypi]\n  username = __token__\n  password = {pypi}", pypi),
        Sample("telegram-bot-token", f"bot = Bot('{telegram}')", telegram.split(":")[1]),  # the id is public
        Sample("twilio-key", f"TWILIO_API_KEY_SID={twilio}", twilio),
        Sample(
            "basic-auth-url",
            f"pip install --index-url https://deploy:{basic_pass}@pypi.acme.dev/simple pkg",
            basic_pass,
        ),
        Sample("django-secret-key", f"SECRET_KEY = '{django}'", django),
        Sample("digitalocean-token", f"doctl auth init -t {digitalocean}", digitalocean),
    ]


def first_lookalikes() -> list[Sample]:
    """Things that are not secrets and must come through unchanged (``secret`` = the value)."""
    sha = hashlib.sha1(b"commit").hexdigest()
    sha256 = hashlib.sha256(b"wheel").hexdigest()
    sri = "sha512-" + base64.b64encode(hashlib.sha512(b"pkg").digest()).decode()
    text64 = base64.b64encode(b"The quick brown fox jumps over the lazy dog, twice.").decode()
    cfg64 = base64.b64encode(b'{"theme": "dark", "fontSize": 14, "lineNumbers": true}').decode()
    uid = str(uuid.UUID(int=RNG.getrandbits(128), version=4))
    req = str(uuid.UUID(int=RNG.getrandbits(128), version=4))
    out = [
        Sample("uuid", f"session_id={uid}", uid),
        Sample("uuid-json", f'{{"request_id": "{req}", "status": 200}}', req),
        Sample("git-sha", f"commit {sha}\nAuthor: Jane <jane@example.com>", sha),
        Sample("git-short-sha", f"{sha[:7]} Fix the parser", sha[:7]),
        Sample("lockfile-hash", f'{{file = "pkg-1.0-py3-none-any.whl", hash = "sha256:{sha256}"}}', sha256),
        Sample(
            "cargo-checksum",
            f'checksum = "{hashlib.sha256(b"crate").hexdigest()}"',
            hashlib.sha256(b"crate").hexdigest(),
        ),
        Sample("npm-integrity", f'"integrity": "{sri}",', sri),
        Sample("docker-digest", f"image: python@sha256:{sha256}", sha256),
        Sample("base64-text", f"echo {text64} | base64 -d", text64),
        Sample("base64-json", f"settings: {cfg64}", cfg64),
        Sample(
            "md5", f"{hashlib.md5(b'file').hexdigest()}  dist/app.tar.gz", hashlib.md5(b"file").hexdigest()
        ),
        Sample("env-reference", 'password = os.environ["DB_PASSWORD"]', 'os.environ["DB_PASSWORD"]'),
        Sample("template-reference", "DB_PASSWORD=${DB_PASSWORD}", "${DB_PASSWORD}"),
        Sample("compose-reference", "POSTGRES_PASSWORD: ${POSTGRES_PASSWORD:-}", "${POSTGRES_PASSWORD:-}"),
        Sample(
            "url-without-password",
            "DATABASE_URL=postgres://app@localhost:5432/app",
            "postgres://app@localhost:5432/app",
        ),
        Sample(
            "https-url",
            "see https://github.com/acme/api/blob/main/src/server.py#L42",
            "https://github.com/acme/api/blob/main/src/server.py#L42",
        ),
        Sample(
            "type-annotation",
            "def login(user: str, password: str, token: str | None = None) -> Session:",
            "password: str",
        ),
        Sample("attribute", "token = self.session.token", "self.session.token"),
        Sample("function-call", "api_key = load_api_key(config)", "load_api_key(config)"),
        Sample("max-tokens", "max_tokens: 100000", "100000"),
        Sample(
            "identifier",
            "test_redaction_keeps_lookalike_values_intact_in_summaries()",
            "test_redaction_keeps_lookalike_values_intact_in_summaries",
        ),
        Sample(
            "camel-identifier",
            "AbstractSingletonProxyFactoryBean2Impl.getInstance()",
            "AbstractSingletonProxyFactoryBean2Impl",
        ),
        Sample(
            "python-path",
            "/usr/lib/python3.11/site-packages/pydantic_core/_pydantic_core.cpython-311-x86_64-linux-gnu.so",
            "_pydantic_core.cpython-311-x86_64-linux-gnu.so",
        ),
        Sample("timestamp", "2024-05-01T10:00:00.123456+00:00 started", "2024-05-01T10:00:00.123456+00:00"),
        Sample(
            "ipv6",
            "listening on [2001:0db8:85a3:0000:0000:8a2e:0370:7334]:8080",
            "2001:0db8:85a3:0000:0000:8a2e:0370:7334",
        ),
        Sample("semver", "requires litellm>=1.40.0,<2.0.0", "litellm>=1.40.0,<2.0.0"),
        Sample("placeholder-key", "OPENAI_API_KEY=your-api-key", "your-api-key"),
        Sample("masked", "password: ********", "********"),
        Sample(
            "prose",
            "The token limit is reached when the password reset flow retries.",
            "The token limit is reached when the password reset flow retries.",
        ),
        Sample("long-number", "order 12345678901234567890 shipped", "12345678901234567890"),
        Sample("css-color", "color: #1e90ff; background: #fafafa;", "#1e90ff"),
        Sample("k8s-name", "pod/api-server-7d9c8b6f5d-x2x9k Running", "api-server-7d9c8b6f5d-x2x9k"),
        Sample(
            "wheel-name",
            "Downloading torch-2.3.0+cu121-cp311-cp311-linux_x86_64.whl",
            "torch-2.3.0+cu121-cp311-cp311-linux_x86_64.whl",
        ),
    ]
    return out


SECRETS = provider_secrets() + more_secrets()
LOOKALIKES = first_lookalikes() + more_lookalikes()
