"""Secrets beyond the provider formats: wrapped in base64 or URL encoding, passphrases and plain-word
passwords under secret-looking keys in every config format, connection strings, private keys, cloud
keys and JWTs where people paste them. ``Sample.secret`` is the text as it sits in the context (the
encoded form for an encoded secret): none of it may survive redaction.
"""

from __future__ import annotations

import json
import re
import string

from tests.corpus_common import (
    ALNUM,
    B64,
    DIGITS,
    HEX,
    RNG,
    URLSAFE,
    Sample,
    b64,
    jwt,
    passphrase,
    pem,
    plain_password,
    rand,
    urlenc,
    word,
)


def base64_wrapped() -> list[Sample]:
    """Credentials whose text never appears: only their base64 does."""
    docker = b64(f"deploy:{rand(ALNUM, 20)}")
    docker_pat = b64(f"jane:ghp_{rand(ALNUM, 36)}")
    basic = b64(f"admin:{plain_password()}")
    basic_curl = b64(f"ci-bot:{passphrase(3)}")
    basic_py = b64(f"api:{rand(ALNUM, 16)}")
    proxy = b64(f"proxyuser:{plain_password()}")
    k8s_password = b64(plain_password())
    k8s_url = b64(f"postgres://app:{rand(ALNUM, 14)}@db.prod.svc:5432/app")
    k8s_key = b64(pem("RSA PRIVATE KEY", 3) + "\n")
    inner = b64(f"robot:{rand(ALNUM, 24)}")
    dockerconfig = b64(json.dumps({"auths": {"registry.acme.dev": {"auth": inner}}}))
    config_yaml = b64(f"upstream:\n  url: https://api.acme.dev\n  api_key: {rand(ALNUM, 32)}\n")
    aws = b64(rand(B64, 40))
    npm_auth = b64(f"jane:{plain_password()}")
    registry = b64(f"gitlab-ci-token:glpat-{rand(URLSAFE, 20)}")
    service = b64(
        json.dumps({"type": "service_account", "private_key": pem("PRIVATE KEY", 2) + "\n"}, indent=2)
    )
    script = b64(f"export GITHUB_TOKEN=ghp_{rand(ALNUM, 36)}\n")
    query = b64(f"svc:{rand(ALNUM, 18)}")
    client_key = b64(pem("EC PRIVATE KEY", 2) + "\n")
    return [
        Sample(
            "docker-config-auth",
            json.dumps({"auths": {"https://index.docker.io/v1/": {"auth": docker}}}, indent=2),
            docker,
        ),
        Sample("docker-config-auth-ghcr", f'{{"auths":{{"ghcr.io":{{"auth":"{docker_pat}"}}}}}}', docker_pat),
        Sample(
            "http-basic-header",
            f"> GET /admin HTTP/1.1\n> Host: acme.dev\n> Authorization: Basic {basic}",
            basic,
        ),
        Sample(
            "http-basic-curl",
            f"curl -H 'Authorization: Basic {basic_curl}' https://ci.acme.dev/api",
            basic_curl,
        ),
        Sample("http-basic-python", f'headers = {{"Authorization": "Basic {basic_py}"}}', basic_py),
        Sample("proxy-authorization", f"Proxy-Authorization: Basic {proxy}\r\nHost: example.org", proxy),
        Sample(
            "k8s-secret-password",
            f"apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\ndata:\n  username: YXBw\n"
            f"  password: {k8s_password}\n",
            k8s_password,
        ),
        Sample("k8s-secret-url", f"data:\n  DATABASE_URL: {k8s_url}\n  LOG_LEVEL: aW5mbw==\n", k8s_url),
        Sample("k8s-secret-tls-key", f"type: kubernetes.io/tls\ndata:\n  tls.key: {k8s_key}\n", k8s_key),
        Sample(
            "k8s-dockerconfigjson",
            f"type: kubernetes.io/dockerconfigjson\ndata:\n  .dockerconfigjson: {dockerconfig}\n",
            dockerconfig,
        ),
        Sample("k8s-secret-config-file", f"data:\n  config.yaml: {config_yaml}\n", config_yaml),
        Sample("k8s-secret-aws", f"  AWS_SECRET_ACCESS_KEY: {aws}\n", aws),
        Sample("npmrc-auth", f"registry=https://npm.acme.dev/\n_auth={npm_auth}\nalways-auth=true", npm_auth),
        Sample("ci-registry-auth", f'REGISTRY_AUTH="{registry}"', registry),
        Sample("base64-service-account", f"GOOGLE_CREDENTIALS_B64={service}", service),
        Sample("base64-shell-script", f"echo {script} | base64 -d | sh", script),
        Sample("base64-in-query", f"GET /hook?auth={query}&event=push HTTP/1.1", query),
        Sample(
            "kubeconfig-client-key",
            f"users:\n- name: admin\n  user:\n    client-key-data: {client_key}",
            client_key,
        ),
    ]


def url_encoded() -> list[Sample]:
    """Secrets whose structure only shows once the URL encoding is undone."""
    dsn_pass = rand(ALNUM, 12)
    token = rand(ALNUM, 32)
    phrase = passphrase(4)
    json_pass = passphrase(3)
    key = pem("PRIVATE KEY", 2)
    client = rand(B64, 32)
    mongo = rand(ALNUM, 14)
    aws = rand(B64, 40)
    return [
        Sample(
            "url-encoded-dsn",
            f"GET /connect?dsn={urlenc(f'postgres://app:{dsn_pass}@db:5432/app')}&timeout=5",
            dsn_pass,
        ),
        Sample(
            "url-encoded-redirect-token",
            f"Location: https://app.acme.dev/login?next={urlenc(f'/cb?access_token={token}&state=1')}",
            token,
        ),
        Sample(
            "form-password", f"grant_type=password&username=jane&password={urlenc(phrase)}", urlenc(phrase)
        ),
        Sample(
            "url-encoded-json-body",
            f"payload={urlenc(json.dumps({'user': 'jane', 'password': json_pass}))}",
            urlenc(json_pass),
        ),
        Sample("url-encoded-private-key", f"key={urlenc(key)}&format=pem", urlenc(key.splitlines()[1])),
        Sample("form-client-secret", f"client_id=acme-web&client_secret={urlenc(client)}", urlenc(client)),
        Sample(
            "url-encoded-mongodb",
            f"INFO connecting to {urlenc(f'mongodb+srv://admin:{mongo}@cluster0.x1y2z.mongodb.net/prod')}",
            mongo,
        ),
        Sample("url-encoded-aws-secret", f"q=aws_secret_access_key%3D{urlenc(aws)}", urlenc(aws)),
    ]


def under_secret_keys() -> list[Sample]:
    """Passphrases with spaces and plain-word passwords: only the key says they are secret."""
    p = [passphrase(n) for n in (4, 3, 5, 4, 3, 4, 3, 4, 3, 4, 3, 4, 3, 4)]
    client_secret = rand(ALNUM, 24)
    w = [plain_password() for _ in range(20)]
    return [
        Sample("yaml-passphrase", f"ssh:\n  key_file: ~/.ssh/deploy\n  passphrase: {p[0]}\n", p[0]),
        Sample("yaml-quoted-password", f'database:\n  user: app\n  password: "{p[1]}"\n', p[1]),
        Sample("yaml-single-quoted", f"db_password: '{p[2]}'  # rotated monthly", p[2]),
        Sample("yaml-plain-word", f"smtp:\n  host: mail.acme.dev\n  password: {w[0]}\n", w[0]),
        Sample("yaml-dotted-key", f"mail.smtp.password: {w[1]}", w[1]),
        Sample("json-passphrase", json.dumps({"user": "jane", "password": p[3]}, indent=2), p[3]),
        Sample("json-compact-plain", f'{{"user":"jane","password":"{w[2]}"}}', w[2]),
        Sample(
            "json-camel-secret", f'{{"clientId": "web", "clientSecret": "{client_secret}"}}', client_secret
        ),
        Sample("dotenv-plain-word", f"DB_HOST=localhost\nDB_PASSWORD={w[3]}\n", w[3]),
        Sample("dotenv-quoted-phrase", f'SMTP_PASSWORD="{p[4]}"', p[4]),
        Sample("dotenv-single-quoted", f"export ADMIN_PASS='{w[4]}'", w[4]),
        Sample("dotenv-unquoted-phrase", f"KEY_PASSPHRASE={p[5]}\nLOG_LEVEL=info", p[5]),
        Sample("toml-password", f'[database]\nhost = "db"\npassword = "{p[6]}"\n', p[6]),
        Sample("toml-plain-word", f'[smtp]\npassword = "{w[5]}"', w[5]),
        Sample("ini-passphrase", f"[mysql]\nuser = root\npassword = {p[7]}\n", p[7]),
        Sample("ini-pass", f"[ftp]\nuser = upload\npass = {w[6]}\n", w[6]),
        Sample("java-properties", f"spring.datasource.password={w[7]}", w[7]),
        Sample("compose-env", f"    environment:\n      MYSQL_ROOT_PASSWORD: {w[8]}\n", w[8]),
        Sample("compose-list", f"    environment:\n      - POSTGRES_PASSWORD={w[9]}\n", w[9]),
        Sample("ansible-become", f"ansible_become_password: {p[8]}", p[8]),
        Sample("yaml-secret", f'webhook:\n  secret: "{p[9]}"', p[9]),
        Sample("python-literal", f'    password = "{p[10]}"', p[10]),
        Sample("js-literal", f"const dbPassword = '{w[10]}';", w[10]),
        Sample("go-struct", f'cfg := Config{{User: "app", Password: "{w[11]}"}}', w[11]),
        Sample("ruby-config", f'config.password = "{w[12]}"', w[12]),
        Sample("php-array", f"'password' => '{p[11]}',", p[11]),
        Sample("terraform", f'resource "aws_db_instance" "db" {{\n  password = "{w[13]}"\n}}', w[13]),
        Sample(
            "xml-password",
            f"<server>\n  <username>deploy</username>\n  <password>{w[14]}</password>\n</server>",
            w[14],
        ),
        Sample("cli-flag", f"mysql -u root --password={w[15]} app < dump.sql", w[15]),
        Sample("cli-flag-spaced", f"docker login -u jane --password '{p[12]}' registry.acme.dev", p[12]),
        Sample("libpq-string", f"host=db port=5432 user=app password={w[16]} dbname=app", w[16]),
        Sample(
            "ado-connection-string", f"Server=tcp:db,1433;Database=app;User ID=sa;Password={w[17]}!;", w[17]
        ),
        Sample("flask-secret-key", f"app.secret_key = '{p[13]}'", p[13]),
        Sample("pgpassword-export", f"export PGPASSWORD={w[18]}", w[18]),
        Sample("netrc", f"machine api.heroku.com\n  login jane@acme.dev\n  password {w[19]}", w[19]),
    ]


def connection_strings() -> list[Sample]:
    redis = rand(ALNUM, 16)
    amqp = f"{word()}-{word()}-{rand(DIGITS, 2)}"
    mysql = plain_password()
    smtp = rand(ALNUM, 8) + "%21" + rand(ALNUM, 4)
    jdbc = plain_password()
    pct = rand(ALNUM, 6) + "%40" + rand(ALNUM, 6) + "%2F"
    return [
        Sample("redis-url-no-user", f"REDIS_URL=redis://:{redis}@cache:6379/0", redis),
        Sample("amqp-url", f"broker_url = 'amqp://guest:{amqp}@mq:5672//'", amqp),
        Sample("mysql-url", f"mysql://root:{mysql}@localhost/shop", mysql),
        Sample("smtp-url", f"EMAIL_URL=smtps://mailer:{smtp}@smtp.acme.dev:465", smtp),
        Sample("jdbc-query", f"jdbc:mysql://db:3306/app?user=app&password={jdbc}&useSSL=true", jdbc),
        Sample("percent-encoded-password", f"postgresql://app:{pct}@db/app", pct),
    ]


def cloud_and_tokens() -> list[Sample]:
    session = "IQoJb3JpZ2luX2Vj" + rand(B64, 300)
    azure = rand(ALNUM, 3) + "8Q~" + rand(URLSAFE + "~.", 34)
    heroku = f"{rand(HEX, 8)}-{rand(HEX, 4)}-{rand(HEX, 4)}-{rand(HEX, 4)}-{rand(HEX, 12)}"
    cloudflare = rand(URLSAFE, 40)
    vault = "hvs." + rand(URLSAFE, 24)
    whsec = "whsec_" + rand(ALNUM, 32)
    discord = f"https://discord.com/api/webhooks/{rand(DIGITS, 18)}/{rand(URLSAFE, 68)}"
    upper = string.ascii_uppercase + DIGITS
    slack_hook = f"https://hooks.slack.com/services/T{rand(upper, 8)}/B{rand(upper, 10)}/{rand(ALNUM, 24)}"
    shopify = "shpat_" + rand(HEX, 32)
    mailgun = "key-" + rand(HEX, 32)
    databricks = "dapi" + rand(HEX, 32)
    age = "AGE-SECRET-KEY-1" + rand("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 58)
    glrt = "glrt-" + rand(URLSAFE, 20)
    datadog = rand(HEX, 32)
    newrelic = "NRAK-" + rand(string.ascii_uppercase + DIGITS, 27)
    twilio_auth = rand(HEX, 32)
    legacy = "sk-" + rand(ALNUM, 48)
    rails = rand(HEX, 128)
    enc = rand(B64, 43) + "="
    nextauth = rand(B64, 43) + "="
    totp = rand("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 32)
    stripe_rk = "rk_live_" + rand(ALNUM, 24)
    bearer_jwt = jwt()
    url_jwt = jwt({"aud": "acme", "nonce": rand(ALNUM, 12)})
    storage_jwt = jwt({"user_id": 7, "scope": "admin"})
    ec = pem("EC PRIVATE KEY", 3)
    encrypted = pem("ENCRYPTED PRIVATE KEY", 5)
    pgp = pem("PGP PRIVATE KEY BLOCK", 6)
    crlf = pem("PRIVATE KEY", 3).replace("\n", "\r\n")
    wireguard = b64(RNG.randbytes(32))
    return [
        Sample("aws-session-token", f"aws_session_token = {session}", session),
        Sample(
            "aws-session-token-bare", f"credentials: {{'SessionToken': '{session[:200]}'}}", session[:200]
        ),
        Sample("azure-client-secret", f"AZURE_CLIENT_SECRET={azure}", azure),
        Sample("heroku-api-key", f"HEROKU_API_KEY={heroku}", heroku),
        Sample("cloudflare-token", f"  CLOUDFLARE_API_TOKEN: {cloudflare}", cloudflare),
        Sample("vault-token", f"vault login {vault}", vault),
        Sample("stripe-webhook-secret", f"endpoint_secret = '{whsec}'", whsec),
        Sample("discord-webhook", f"curl -X POST {discord} -d @msg.json", discord.rsplit("/", 1)[1]),
        Sample("slack-webhook", f"SLACK_WEBHOOK={slack_hook}", slack_hook.rsplit("/", 1)[1]),
        Sample("shopify-token", f"X-Shopify-Access-Token: {shopify}", shopify),
        Sample("mailgun-key", f"mg = Mailgun('{mailgun}')", mailgun),
        Sample("databricks-token", f"databricks configure --token {databricks}", databricks),
        Sample("age-secret-key", f"# created: 2024-05-01\n# public key: age1{rand(HEX, 20)}\n{age}", age),
        Sample("gitlab-runner-token", f'  token = "{glrt}"', glrt),
        Sample("datadog-api-key", f"DD_API_KEY={datadog}", datadog),
        Sample("newrelic-key", f"nr = NewRelic({newrelic!r})", newrelic),
        Sample("twilio-auth-token", f"TWILIO_AUTH_TOKEN={twilio_auth}", twilio_auth),
        Sample("openai-legacy-key", f"openai.api_key = '{legacy}'", legacy),
        Sample("rails-secret-key-base", f"production:\n  secret_key_base: {rails}", rails),
        Sample("encryption-key", f"encryption_key: {enc}", enc),
        Sample("nextauth-secret", f"NEXTAUTH_SECRET={nextauth}", nextauth),
        Sample("totp-seed", f"otpauth://totp/ACME:jane?secret={totp}&issuer=ACME", totp),
        Sample("stripe-restricted-key", f"stripe.api_key = {stripe_rk!r}", stripe_rk),
        Sample("jwt-bearer", f"Authorization: Bearer {bearer_jwt}", bearer_jwt.split(".")[2]),
        Sample("jwt-in-url", f"https://app.acme.dev/#id_token={url_jwt}&state=xyz", url_jwt.split(".")[2]),
        Sample(
            "jwt-local-storage", f"localStorage.setItem('auth', '{storage_jwt}')", storage_jwt.split(".")[2]
        ),
        Sample("ec-private-key", ec, ec.splitlines()[2]),
        Sample("encrypted-private-key", encrypted, encrypted.splitlines()[3]),
        Sample("pgp-private-key", pgp, pgp.splitlines()[4]),
        Sample("crlf-private-key", crlf, crlf.split("\r\n")[1]),
        Sample(
            "wireguard-private-key",
            f"[Interface]\nPrivateKey = {wireguard}\nAddress = 10.0.0.1/24",
            wireguard,
        ),
    ]


def second_round() -> list[Sample]:
    """Written as a held-out set after the detector was first tuned on the rest (it then caught 22 of
    these 30); kept here so that what it taught stays caught. ``.pgpass`` lines have no key to go by."""
    redis, cookie, api, hexkey, env_secret, npm_auth = (rand(ALNUM, n) for n in (14, 32, 40, 24, 24, 30))
    basic = b64("user:" + plain_password() + "x")
    part = [rand(ALNUM, 10) for _ in range(3)]
    tf, toml, php, url_key, pgpass = (
        rand(ALNUM, 40),
        rand(ALNUM, 20),
        rand(ALNUM, 12),
        rand(ALNUM, 32),
        rand(ALNUM, 10),
    )
    key_b64 = b64(pem("PRIVATE KEY", 1) + "\n")
    w = [plain_password() + "7" for _ in range(10)]
    p = [passphrase(n) for n in (2, 4, 3, 5, 3)]
    return [
        Sample("redis-cli-a", f"redis-cli -h cache -a {redis} --no-auth-warning", redis),
        Sample("sshpass", f"sshpass -p '{p[0]}' ssh root@10.0.0.5", p[0]),
        Sample("gha-npm-token", f"    env:\n      NPM_TOKEN: npm_{rand(ALNUM, 36)}", ""),
        Sample("pgpass", f"db.acme.dev:5432:app:app:{pgpass}", pgpass),
        Sample("set-cookie", f"Set-Cookie: session={cookie}; Path=/; HttpOnly", cookie),
        Sample("x-api-key-header", f"x-api-key: {api}", api),
        Sample("api-token-hex", f'api_token: "{hexkey.encode().hex()[:32]}"', hexkey.encode().hex()[:32]),
        Sample("curl-user", f"curl -u admin:{w[0]} https://ci.acme.dev/api", w[0]),
        Sample("docker-run-env", f"docker run -e POSTGRES_PASSWORD={w[1]} postgres:16", w[1]),
        Sample("k8s-stringdata-phrase", f"stringData:\n  password: {p[1]}", p[1]),
        Sample(
            "json-nested-credentials", json.dumps({"credentials": {"username": "x", "password": p[2]}}), p[2]
        ),
        Sample("short-quoted-password", f"PASSWORD: '{rand(ALNUM, 4)}'", ""),
        Sample("dockerfile-env", f"ENV API_SECRET={env_secret}", env_secret),
        Sample("dockerfile-arg", f"ARG NPM_AUTH_TOKEN={npm_auth}", npm_auth),
        Sample("wget-basic", f'wget --header="Authorization: Basic {basic}" http://x.acme.dev/a', basic),
        Sample(
            "form-secret-encoded", f"client_id=web&client_secret={part[0]}%2F{part[1]}%2B{part[2]}", part[1]
        ),
        Sample("secret-hex-8", f'"secret": "{rand(HEX, 8)}"', ""),
        Sample("terraform-secret-key", f'  secret_key = "{tf}"', tf),
        Sample("base64-env-file", f"  app.env: {b64(f'DB_PASSWORD={w[2]}' + chr(10))}", ""),
        Sample("netrc-one-line", f"machine api.acme.dev login jane password {w[3]}", w[3]),
        Sample("postgres-query-password", f'psql "postgresql://app@db/app?password={w[4]}"', w[4]),
        Sample("yaml-pass", f"  db:\n    pass: {w[5]}", w[5]),
        Sample("ini-secret-phrase", f"[auth]\nsecret = {p[3]}", p[3]),
        Sample("toml-token", f'token = "{toml}"', toml),
        Sample("export-quoted-phrase", f'export VAULT_PASS="{p[4]}"', p[4]),
        Sample("php-define", f"define('DB_PASSWORD', '{php}');", php),
        Sample("java-properties-spaced", f"db.password = {w[6]}!", w[6]),
        Sample("url-api-key", f"https://api.acme.dev/v1/items?api_key={url_key}&page=2", url_key),
        Sample("base64-pem-json", f'{{"key": "{key_b64}"}}', key_b64),
        Sample("mysql-p", f"mysql -uroot -p{w[7]} app", w[7]),
    ]


def secrets() -> list[Sample]:
    out = base64_wrapped() + url_encoded() + under_secret_keys() + connection_strings() + cloud_and_tokens()
    return out + [_whole(s) for s in second_round()]


def _whole(sample: Sample) -> Sample:
    """A sample whose secret is the value after its last ``: `` / ``=`` / ``' `` (when left empty)."""
    if sample.secret:
        return sample
    tail = re.split(r"[:=] |: |=|'", sample.context.rstrip("'\"\n"))[-1].strip("'\" ")
    return Sample(sample.kind, sample.context, tail)
