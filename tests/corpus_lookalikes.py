"""Look-alikes: public text that resembles a secret — public keys, certificates, checksums and
integrity hashes, git SHAs, UUIDs, data URIs and base64 images, public URLs with query strings, prose
about passwords, code that names them, placeholders. Redaction must leave each context unchanged;
``Sample.secret`` is the part most at risk (it must reach the model intact).
"""

from __future__ import annotations

import base64
import hashlib
import struct
import uuid

from tests.corpus_common import ALNUM, B64, HEX, RNG, URLSAFE, Sample, b64, rand, urlenc


def _blob(*fields: bytes) -> str:
    """An SSH wire-format public key: length-prefixed fields, base64 (as in authorized_keys)."""
    return b64(b"".join(struct.pack(">I", len(f)) + f for f in fields))


def _cert(label: str = "CERTIFICATE", lines: int = 8) -> str:
    body = "\n".join(["MIIC" + rand(B64, 60)] + [rand(B64, 64) for _ in range(lines - 1)])
    return f"-----BEGIN {label}-----\n{body}\n{rand(B64, 30)}=\n-----END {label}-----"


def _digest(data: str, name: str = "sha256") -> bytes:
    return hashlib.new(name, data.encode()).digest()


def public_keys() -> list[Sample]:
    ed = _blob(b"ssh-ed25519", RNG.randbytes(32))
    rsa = _blob(b"ssh-rsa", b"\x01\x00\x01", b"\x00" + RNG.randbytes(256))
    ecdsa = _blob(b"ecdsa-sha2-nistp256", b"nistp256", b"\x04" + RNG.randbytes(64))
    fido = _blob(b"sk-ssh-ed25519@openssh.com", RNG.randbytes(32), b"ssh:")
    ed2 = _blob(b"ssh-ed25519", RNG.randbytes(32))
    cert = _cert()
    chain = _cert(lines=5) + "\n" + _cert(lines=4)
    one_line = _cert(lines=4).replace("\n", "\\n")
    ca_data = b64(_cert(lines=4) + "\n")
    client_cert = b64(_cert(lines=4) + "\n")
    pub = _cert("PUBLIC KEY", 3)
    rsa_pub = _cert("RSA PUBLIC KEY", 4)
    csr = _cert("CERTIFICATE REQUEST", 5)
    pgp = _cert("PGP PUBLIC KEY BLOCK", 6)
    sig = _cert("PGP SIGNATURE", 4)
    wg = b64(RNG.randbytes(32))
    return [
        Sample("ssh-ed25519-pubkey", f"ssh-ed25519 {ed} jane@laptop", ed),
        Sample("ssh-rsa-pubkey", f"ssh-rsa {rsa} deploy@ci", rsa),
        Sample("known-hosts-ecdsa", f"github.com ecdsa-sha2-nistp256 {ecdsa}", ecdsa),
        Sample("ssh-fido-pubkey", f"sk-ssh-ed25519@openssh.com {fido} yubikey", fido),
        Sample("cloud-init-keys", f"ssh_authorized_keys:\n  - ssh-ed25519 {ed2} ops@bastion\n", ed2),
        Sample("terraform-public-key", f'  public_key = "ssh-rsa {rsa}"', rsa),
        Sample("x509-certificate", cert, cert.splitlines()[3]),
        Sample("certificate-chain", chain, chain.splitlines()[2]),
        Sample("certificate-json", f'{{"ca": "{one_line}"}}', one_line.split("\\n")[2]),
        Sample(
            "kubeconfig-ca-data", f"clusters:\n- cluster:\n    certificate-authority-data: {ca_data}", ca_data
        ),
        Sample("kubeconfig-client-cert", f"    client-certificate-data: {client_cert}", client_cert),
        Sample("pem-public-key", pub, pub.splitlines()[2]),
        Sample("pem-rsa-public-key", rsa_pub, rsa_pub.splitlines()[2]),
        Sample("certificate-request", csr, csr.splitlines()[2]),
        Sample("pgp-public-key", pgp, pgp.splitlines()[3]),
        Sample("pgp-signature", sig, sig.splitlines()[2]),
        Sample("wireguard-public-key", f"[Peer]\nPublicKey = {wg}\nAllowedIPs = 10.0.0.2/32", wg),
    ]


def checksums() -> list[Sample]:
    gosum_a = b64(_digest("errors"))
    gosum_b = b64(_digest("errors/go.mod"))
    sri1 = "sha1-" + b64(_digest("left-pad", "sha1"))
    sri512 = "sha512-" + b64(_digest("react", "sha512"))
    sri384 = "sha384-" + b64(_digest("bootstrap.js", "sha384"))
    nix = "sha256-" + b64(_digest("nixpkgs"))
    hex256 = _digest("app.tar.gz").hex()
    http_digest = b64(_digest("body"))
    md5 = b64(_digest("object", "md5"))
    crc = b64(RNG.randbytes(4))
    amz = b64(_digest("upload"))
    ssh_fp = b64(_digest("hostkey")).rstrip("=")
    brew = _digest("bottle").hex()
    lfs = _digest("model.bin").hex()
    gpg = " ".join(_digest("gpg", "sha1").hex().upper()[i : i + 4] for i in range(0, 40, 4))
    etag = b64(_digest("etag", "md5"))
    fingerprint = b64(_digest("device"))
    return [
        Sample(
            "go-sum",
            f"github.com/pkg/errors v0.9.1 h1:{gosum_a}\ngithub.com/pkg/errors v0.9.1/go.mod h1:{gosum_b}",
            gosum_a,
        ),
        Sample("package-lock-sha1", f'      "integrity": "{sri1}",', sri1),
        Sample("yarn-lock", f'react@^18.2.0:\n  version "18.2.0"\n  integrity {sri512}', sri512),
        Sample("pnpm-lock", f"  /react@18.2.0:\n    resolution: {{integrity: {sri512}}}", sri512),
        Sample(
            "html-sri",
            f'<script src="/js/bootstrap.min.js" integrity="{sri384}" crossorigin="anonymous"></script>',
            sri384,
        ),
        Sample("nix-hash", f'  src = fetchurl {{ url = "https://x.org/a.tgz"; hash = "{nix}"; }};', nix),
        Sample("pip-hash", f"requests==2.31.0 \\\n    --hash=sha256:{hex256}", hex256),
        Sample("sha256sum", f"{hex256}  app-1.4.2-linux-amd64.tar.gz", hex256),
        Sample("bsd-checksum", f"SHA256 (app-1.4.2.tar.gz) = {hex256}", hex256),
        Sample("http-digest", f"Digest: sha-256={http_digest}", http_digest),
        Sample("content-md5", f"Content-MD5: {md5}", md5),
        Sample(
            "gsutil-hash",
            f"Hashes [base64] for app.tar.gz:\n\tHash (crc32c):\t\t{crc}\n\tHash (md5):\t\t{md5}",
            md5,
        ),
        Sample("amz-checksum", f"x-amz-checksum-sha256: {amz}", amz),
        Sample("ssh-fingerprint", f"256 SHA256:{ssh_fp} jane@laptop (ED25519)", ssh_fp),
        Sample("homebrew-bottle", f'    sha256 cellar: :any, arm64_sonoma: "{brew}"', brew),
        Sample(
            "git-lfs-pointer",
            f"version https://git-lfs.github.com/spec/v1\noid sha256:{lfs}\nsize 48213",
            lfs,
        ),
        Sample("gpg-fingerprint", f"      Key fingerprint = {gpg}", gpg),
        Sample("s3-etag", f'"ETag": "{etag}",', etag),
        Sample("device-fingerprint", f"fingerprint: {fingerprint}", fingerprint),
    ]


def identifiers_and_ids() -> list[Sample]:
    sha = hashlib.sha1(b"merge").hexdigest()
    blob_a, blob_b = hashlib.sha1(b"a").hexdigest()[:7], hashlib.sha1(b"b").hexdigest()[:7]
    upper = str(uuid.UUID(int=RNG.getrandbits(128), version=4)).upper()
    k8s_uid = str(uuid.UUID(int=RNG.getrandbits(128), version=4))
    guid = str(uuid.UUID(int=RNG.getrandbits(128), version=4)).upper()
    trace = rand(HEX, 32)
    pk = "pk_live_" + rand(ALNUM, 99)
    mapbox = (
        "pk."
        + base64.urlsafe_b64encode(b'{"u":"acme","a":"clx1"}').decode().rstrip("=")
        + "."
        + rand(URLSAFE, 22)
    )
    request_id = "req_" + rand(ALNUM, 14)
    return [
        Sample("git-merge-sha", f"commit {sha}\nMerge: {blob_a} {blob_b}", sha),
        Sample("git-diff-index", f"diff --git a/app.py b/app.py\nindex {blob_a}..{blob_b} 100644", blob_a),
        Sample("uuid-upper", f"$ uuidgen\n{upper}", upper),
        Sample("k8s-uid", f'metadata:\n  uid: {k8s_uid}\n  resourceVersion: "48213"', k8s_uid),
        Sample("vs-solution-guid", f'Project("{{{guid}}}") = "App", "App\\App.csproj"', guid),
        Sample("trace-id", f"traceparent: 00-{trace}-{rand(HEX, 16)}-01", trace),
        Sample("stripe-publishable-key", f"const stripe = Stripe('{pk}');", pk),
        Sample("mapbox-public-token", f"mapboxgl.accessToken = '{mapbox}';", mapbox),
        Sample(
            "request-id",
            f'{{"error": {{"message": "rate limited"}}, "request_id": "{request_id}"}}',
            request_id,
        ),
        Sample(
            "git-pseudo-version",
            "golang.org/x/sys v0.0.0-20240501123456-abcdef123456 // indirect",
            "v0.0.0-20240501123456-abcdef123456",
        ),
        Sample(
            "docker-image-tag",
            "image: ghcr.io/acme/api:2024.05.01-3f2a9c1",
            "ghcr.io/acme/api:2024.05.01-3f2a9c1",
        ),
        Sample(
            "aws-arn",
            "arn:aws:iam::123456789012:role/acme-api-LambdaExecRole-1RJ6DJCQ3ZN0K",
            "acme-api-LambdaExecRole-1RJ6DJCQ3ZN0K",
        ),
    ]


def data_and_images() -> list[Sample]:
    png = b64(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + RNG.randbytes(90))
    gif = b64(b"GIF89a" + RNG.randbytes(60))
    woff = b64(b"wOF2\x00\x01\x00\x00" + RNG.randbytes(120))
    svg = b64(b'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 8 8"><path d="M0 0h8v8H0z"/></svg>')
    jpeg = b64(b"\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01" + RNG.randbytes(120))
    icon = b64(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + RNG.randbytes(60))
    octet = b64(RNG.randbytes(96))
    pdf = b64(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n" + RNG.randbytes(220))
    mime = "\n".join(pdf[i : i + 76] for i in range(0, len(pdf), 76))
    notebook = b64(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + RNG.randbytes(100))
    return [
        Sample("data-uri-png", f'<img alt="logo" src="data:image/png;base64,{png}">', png),
        Sample("data-uri-markdown", f"![spinner](data:image/gif;base64,{gif})", gif),
        Sample(
            "data-uri-font",
            f"@font-face {{ src: url(data:font/woff2;base64,{woff}) format('woff2'); }}",
            woff,
        ),
        Sample("data-uri-svg", f".icon {{ background: url('data:image/svg+xml;base64,{svg}'); }}", svg),
        Sample("data-uri-octet", f"fetch('data:application/octet-stream;base64,{octet}')", octet),
        Sample("base64-jpeg-json", f'{{"id": 7, "thumbnail": "{jpeg}"}}', jpeg),
        Sample("base64-png-field", f"icon: {icon}", icon),
        Sample(
            "mime-attachment",
            f'Content-Type: application/pdf; name="invoice.pdf"\n'
            f"Content-Transfer-Encoding: base64\n\n{mime}\n",
            mime.splitlines()[1],
        ),
        Sample(
            "notebook-output",
            f'   "data": {{\n    "image/png": "{notebook}",\n    "text/plain": ["<Figure>"]',
            notebook,
        ),
    ]


def urls() -> list[Sample]:
    google = (
        "https://www.google.com/search?q=aho+corasick+rust&oq=aho+cora&gs_lcrp=EgZjaHJvbWUqBwgBEAAYgAQ"
        f"&sourceid=chrome&ie=UTF-8&ved=2ahUKEwj{rand(URLSAFE, 40)}"
    )
    youtube = f"https://www.youtube.com/watch?v={rand(URLSAFE, 11)}&list=PL{rand(URLSAFE, 32)}&t=42s"
    amazon = (
        f"https://www.amazon.com/dp/B08N5WRWNW/ref=sr_1_3?crid={rand(ALNUM.upper(), 13)}"
        "&keywords=usb+c+hub&sr=8-3"
    )
    oauth = (
        f"https://github.com/login/oauth/authorize?client_id=Iv1.{rand(HEX, 16)}"
        f"&redirect_uri={urlenc('https://app.acme.dev/callback?next=/home')}&scope=read%3Auser"
        f"&state={rand(URLSAFE, 16)}&code_challenge={rand(URLSAFE, 43)}&code_challenge_method=S256"
    )
    return [
        Sample("google-search-url", google, google),
        Sample("youtube-url", youtube, youtube),
        Sample("amazon-url", amazon, amazon),
        Sample("oauth-authorize-url", oauth, oauth),
        Sample(
            "utm-url",
            "https://acme.dev/pricing?utm_source=newsletter&utm_medium=email"
            "&utm_campaign=spring%20sale%202024",
            "spring%20sale%202024",
        ),
        Sample(
            "wikipedia-encoded",
            "https://en.wikipedia.org/wiki/Caf%C3%A9_au_lait#History",
            "Caf%C3%A9_au_lait",
        ),
        Sample(
            "search-password-reset",
            "https://support.acme.dev/search?q=password%20reset%20email&page=2",
            "q=password%20reset%20email",
        ),
        Sample(
            "docs-anchor",
            "https://docs.python.org/3/library/secrets.html#secrets.token_urlsafe",
            "secrets.token_urlsafe",
        ),
        Sample(
            "fonts-url",
            "https://fonts.googleapis.com/css2?family=Inter:wght@400;700&display=swap",
            "family=Inter:wght@400;700",
        ),
        Sample("fbclid-url", f"https://acme.dev/blog/launch?fbclid=IwAR{rand(URLSAFE, 56)}", "fbclid=IwAR"),
    ]


def prose_and_code() -> list[Sample]:
    lorem = (
        "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore "
        "et dolore magna aliqua. Ut enim ad minim veniam, quis nostrud exercitation ullamco laboris nisi ut "
        "aliquip ex ea commodo consequat."
    )
    lines = [
        ("lorem-ipsum", lorem),
        ("docs-password-rule", "Password: must be at least 12 characters long and contain a digit."),
        ("docs-token-step", "Token: the personal access token you created in step 2"),
        ("docs-secret-comment", "# secret: used to sign the session cookies"),
        ("markdown-option", "- **password**: the password of the database user (required)"),
        ("prose-keys", "Rotate the API key and the webhook secret whenever a token may have leaked."),
        ("i18n-json", '{"password": "Password", "forgot_password": "Forgot your password?"}'),
        ("i18n-yaml", "token_expired: Your session token has expired, please sign in again."),
        ("html-password-input", '<input type="password" name="password" placeholder="Enter your password">'),
        ("github-actions-secret", "          password: ${{ secrets.DOCKERHUB_TOKEN }}"),
        ("helm-template", "  password: {{ .Values.db.password | quote }}"),
        ("ansible-vault-tag", "db_password: !vault |"),
        ("empty-password", "DB_PASSWORD=\nDB_HOST=localhost"),
        ("placeholder-angle", "API_KEY=<your-api-key>"),
        ("placeholder-upper", 'api_key: "YOUR_API_KEY_HERE"'),
        ("placeholder-x", "token: xxxxxxxxxxxxxxxx"),
        ("placeholder-null", "password: null\nsecret: ~"),
        ("placeholder-changeme", "POSTGRES_PASSWORD=changeme"),
        (
            "k8s-secret-ref",
            "        valueFrom:\n          secretKeyRef:\n"
            "            name: db-credentials\n            key: password",
        ),
        ("k8s-secret-name", "  tls:\n    - hosts: [acme.dev]\n      secretName: acme-dev-tls"),
        ("token-url", "token_url: https://oauth2.googleapis.com/token"),
        ("password-policy", "password_min_length: 12\npassword_require_digit: true"),
        ("max-tokens-camel", '{"maxTokens": 4096, "temperature": 0.2}'),
        ("python-self-assign", "        self.password = password\n        self.token = token"),
        ("python-env-lookup", 'SECRET_KEY = env("DJANGO_SECRET_KEY")'),
        ("python-settings-ref", "client = OpenAI(api_key=settings.OPENAI_API_KEY)"),
        ("python-annotation-optional", "    password: Optional[str] = None"),
        ("pydantic-secret", "    api_key: SecretStr"),
        ("ts-field", "  private readonly accessToken: string;"),
        ("react-state", "const [token, setToken] = useState<string | null>(null);"),
        ("zod-schema", "  password: z.string().min(12),"),
        ("go-struct-tag", 'Password string `json:"password"`'),
        ("rust-secret", "let secret = SecretString::new(input.trim().to_owned());"),
        (
            "java-encoder",
            "PasswordEncoder encoder = PasswordEncoderFactories.createDelegatingPasswordEncoder();",
        ),
        ("swift-keychain", "kSecAttrAccessible as String: kSecAttrAccessibleWhenUnlockedThisDeviceOnly"),
        ("hashed-password-var", "    password: hashedPassword,"),
        ("tokenizer", 'tokenizer = AutoTokenizer.from_pretrained("bert-base-uncased")'),
        ("terraform-ref", "  password = var.db_password"),
        ("js-env", "const apiKey = process.env.OPENAI_API_KEY;"),
        ("go-getenv", 'password := os.Getenv("DB_PASSWORD")'),
        ("tailwind", '<div class="bg-gradient-to-r from-indigo-500 via-purple-500 to-pink-500">'),
        ("pwd-path", "PWD=/home/jane/projects/acme-api"),
        ("auth-type", "auth: oauth2\nauth_mode: device"),
    ]
    return [Sample(kind, text, text) for kind, text in lines]


_SECOND_KINDS = (
    "cargo-checksum-2 github-tree-sha github-node-id youtube-channel-url google-docs-url weak-etag "
    "token-ttl-setting secret-scanning-setting auth-required-setting token-endpoint spki-public-key "
    "csp-nonce password-constant password-comparison header-lookup selenium-send-keys openapi-auth "
    "openapi-security-scheme bearer-placeholder command-substitution german-prose docker-pull-digest "
    "commit-sha-field k8s-metadata secret-store-call rust-token-iterator yaml-str-tag todo-comment "
    "google-client-id token-type-url"
)


def second_round() -> list[Sample]:
    """Written as a held-out set after the detector was first tuned on the rest (3 of these 30 were
    then changed); kept so that what it taught stays. Random public ids in a URL path (a YouTube
    channel, a Google Docs document) are indistinguishable from tokens by their characters."""
    spki = "MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE" + b64(RNG.randbytes(48))
    texts = [
        f'checksum = "{_digest("crate2").hex()}"',
        f'"sha": "{hashlib.sha1(b"tree").hexdigest()}",',
        'node_id: "MDQ6VXNlcjE="',
        f"https://www.youtube.com/channel/UC{rand(URLSAFE, 22)}",
        f"https://docs.google.com/spreadsheets/d/1{rand(URLSAFE, 43)}/edit",
        'ETag: W/"5e15153d-120f"',
        "password_reset_token_ttl: 3600",
        "secret_scanning: enabled",
        "auth_required: true",
        "token_endpoint: https://login.acme.dev/oauth/token",
        f'"publicKey": "{spki}"',
        f'<script nonce="{rand(ALNUM, 22)}">',
        "const PASSWORD_MIN = 12;",
        "if password == confirm:",
        'token = request.headers.get("Authorization")',
        "password_input.send_keys(password)",
        "  auth:\n    type: oauth2",
        "securitySchemes:\n  api_key:\n    type: apiKey\n    in: header\n    name: X-API-Key",
        "Authorization: Bearer <token>",
        "export TOKEN=$(gcloud auth print-access-token)",
        "Der Schlüssel liegt unter der Fußmatte, das Passwort steht im Tresor.",
        f"docker pull nginx@sha256:{_digest('nginx').hex()}",
        f"commit: {hashlib.sha1(b'release').hexdigest()}",
        f'resourceVersion: "48213"\nuid: {uuid.UUID(int=RNG.getrandbits(128), version=4)}',
        "self.secret_store = SecretStore(path)",
        "let token = tokens.next().unwrap();",
        "password: !!str 123456",
        "# TODO: rotate the API token before release",
        "client_id: 8a61f9b3a7aba766.apps.googleusercontent.com",
        "https://example.com/reset?token_type=bearer&expires_in=3600",
    ]
    kinds = _SECOND_KINDS.split(" ")
    return [Sample(kind, text, text) for kind, text in zip(kinds, texts, strict=True)]


def lookalikes() -> list[Sample]:
    first = (
        public_keys() + checksums() + identifiers_and_ids() + data_and_images() + urls() + prose_and_code()
    )
    return first + second_round()
