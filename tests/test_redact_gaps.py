"""Kinds docs/redaction.md listed as not caught, closed by the rules written there ("from this page's own
list"): each case is a form written for this file, in many syntaxes, and no corpus's miss; the
look-alikes beside each are what the same rule must leave readable."""

from __future__ import annotations

import pytest

from agentcli.redact import PLACEHOLDER, redact
from tests.corpus_common import Sample, leaks

NAME_SHAPED = "open_sesame"
KEBAB = "correct-horse-battery"
PASSWORD = "Tr0ub4dor3"


def case(kind: str, context: str, secret: str) -> object:
    """A secret in its context (``$S`` marks where)."""
    return pytest.param(context.replace("$S", secret), secret, id=kind)


def caught(text: str, secret: str) -> bool:
    return not leaks(Sample("", text, secret), PLACEHOLDER.sub("", redact(text)))


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        case("ini", "[db]\npassword = $S\n", NAME_SHAPED),
        case("env", "DB_PASSWORD=$S\n", NAME_SHAPED),
        case("yaml", "database:\n  password: $S\n", KEBAB),
        case("yaml-quoted", "  passwd: '$S'\n", NAME_SHAPED),
        case("json", '{"user": "app", "password": "$S"}', KEBAB),
        case("python", 'conn = make(password="$S")', NAME_SHAPED),
        case("js", "const cfg = { passphrase: '$S' };", KEBAB),
        case("ts-camel", 'const admin_password: string = "openSesame";', "openSesame"),
        case("go", 'cfg.Password = "$S"', NAME_SHAPED),
        case("java", 'String dbPassword = "$S";', KEBAB),
        case("csharp", 'var pwd = @"$S";', NAME_SHAPED),
        case("hcl", 'resource "x" "y" {\n  password = "$S"\n}', KEBAB),
        case("dockerfile", "ENV DB_PASS=$S\n", NAME_SHAPED),
        case("shell", "export MYSQL_PASSWORD='$S'\n", KEBAB),
        case("xml", "<password>$S</password>", NAME_SHAPED),
        case("properties", "spring.datasource.password=$S\n", KEBAB),
        case("shell-flag", "tool --password=$S --verbose", NAME_SHAPED),
        case("powershell-flag", "Connect-Thing -Password $S -Force", KEBAB),
    ],
)
def test_a_password_shaped_like_a_name_under_a_key_naming_a_password_is_redacted(
    text: str, secret: str
) -> None:
    assert caught(text, secret)


@pytest.mark.parametrize(
    "text",
    [
        "password: user_password\n",  # the key's own noun: a field's name
        'db_password = "db-password-prod"\n',  # the key's words
        "secretName: tls-secret\n",  # a key naming a secret: its value names another thing
        "token: github_token\n",
        "password = DB_PASSWORD\n",  # an environment variable's name
        'keywords used in safe contexts ("password","api_key","secret_key")',  # names naming secrets
        "password: secret_key_base\n",
        "password: userPass,\n",  # JavaScript: a variable
        "password = open_sesame(prompt)\n",  # a call
        "password = settings.db_password\n",  # an attribute
        'login(password=open_sesame, user="x")',  # code's variable inline
    ],
)
def test_a_name_that_names_the_key_or_a_variable_stays_readable(text: str) -> None:
    assert redact(text) == text


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        case("csharp", 'var cred = new NetworkCredential("me", "$S");', PASSWORD),
        case("csharp-user-variable", 'var cred = new NetworkCredential(userName, "$S");', PASSWORD),
        case("kotlin-user-variable", 'PasswordAuthentication(user, "$S".toCharArray())', PASSWORD),
        case("csharp-domain", 'new NetworkCredential("me", "$S", "CORP")', PASSWORD),
        case("java-chars", 'return new PasswordAuthentication("user", "$S".toCharArray());', PASSWORD),
        case("java-apache", 'new UsernamePasswordCredentials("admin", "$S")', PASSWORD),
        case("python-auth-tuple", 'requests.get(url, auth=("user", "$S"))', PASSWORD),
        case("python-basic-auth", 'auth = HTTPBasicAuth("user", "$S")', PASSWORD),
        case("python-login", "server.login('me@example.com', '$S')", PASSWORD),
        case("python-es", "Elasticsearch(hosts, http_auth=('elastic', '$S'))", PASSWORD),
        case("js-array", "const client = new Client({ basic_auth: ['elastic', '$S'] });", PASSWORD),
        case("go-basic", 'req.SetBasicAuth("admin", "$S")', PASSWORD),
        case("go-plain", 'auth := smtp.PlainAuth("", "me@example.com", "$S", "smtp.example.com")', PASSWORD),
        case("aiohttp", 'aiohttp.BasicAuth(login="u", password="$S")', PASSWORD),
        case("ruby-no-parens", "req.basic_auth 'admin', '$S'", PASSWORD),
        case("ts-authenticate", 'await client.authenticate("svc", "$S");', PASSWORD),
        case("python-connect", 'mysql.connector.connect("localhost", "root", "$S")', PASSWORD),
        case("java-jdbc", 'DriverManager.getConnection("jdbc:mysql://db/app", "app", "$S");', PASSWORD),
        case("php-connect", '$db = mysqli_connect("localhost", "root", "$S", "shop");', PASSWORD),
    ],
)
def test_a_password_given_to_a_credential_call_with_no_key_is_redacted(text: str, secret: str) -> None:
    assert caught(text, secret)


@pytest.mark.parametrize(
    "text",
    [
        "new NetworkCredential(user, password)",  # variables
        'HTTPBasicAuth("user", os.environ["PW"])',  # a reference
        'auth = HTTPBasicAuth("user", "${PASSWORD}")',
        'login("Username", "Password")',  # labels
        'sqlite3.connect("app.db")',  # one argument
        'socket.create_connection(("example.com", 80), 5)',
        'connect("localhost", 5432, "mydb")',  # no user literal: a port
        'auth_header("Content-Type", "application/json")',  # the last word is not a credential's
        'get_auth_url("https://example.com", "/login")',
        'auth=("user", "")',
        'SigV4Auth(credentials, "bedrock", region)',  # after a name, a string is anything
        "return extract_field_from_www_auth(response, 'scope')",
        "'OAuth': ('oauth_get_sbs', 'oauth_urlencode'),",  # names passed as strings
        'login("admin", "open_sesame")',
    ],
)
def test_a_call_without_a_literal_password_stays_readable(text: str) -> None:
    assert redact(text) == text


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        case("docker-login", "docker login -u deploy -p $S registry.example.com", PASSWORD),
        case("mycli-glued", "mycli -u root -p$S shop", PASSWORD),
        case("sqlcmd", "sqlcmd -S db -U sa -P $S -Q 'select 1'", PASSWORD),
        case("long-user", "cf login --user admin -p $S", PASSWORD),
        case("username", "tool --username admin -p '$S'", PASSWORD),
        case("dockerfile", "RUN mongo-tool -u admin -p $S --eval 'x'", PASSWORD),
        case("yaml-script", 'script:\n  - cli -u ci -p "$S" upload\n', PASSWORD),
        case("word-after-space", "remote-run -u DOMAIN\\me -p $S cmd", "bluejay"),
        case("keytool", "keytool -importkeystore -storepass $S -keypass $S", PASSWORD),
        case("pass-eq", "sometool --pass=$S", PASSWORD),
        case("password-space", "sometool --password $S", PASSWORD),
    ],
)
def test_a_password_option_after_a_user_option_on_any_command_line_is_redacted(
    text: str, secret: str
) -> None:
    assert caught(text, secret)


@pytest.mark.parametrize(
    "text",
    [
        "psql -h db -U admin -p 5432 mydb",  # a port
        "docker run -u 1000 -p 8080:80 nginx",  # a port mapping
        "docker run -u root -p 127.0.0.1:80:80/tcp nginx",
        "mysql -u root -P 3306 shop",
        "rsync -u -p src/ dst/",  # -u takes no user here
        "tool -u admin -p $PASSWORD",  # a reference
        "mkdir -p build && useradd -u 1000 app",  # another command
        "ssh -p 2222 me@host",
        "docker run -u root -P nginx",  # -P after -u: not the user's letter case
    ],
)
def test_a_port_or_a_flag_after_a_user_option_stays_readable(text: str) -> None:
    assert redact(text) == text


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        case("pgpass", "db.example.com:5432:shop:app:$S\n", PASSWORD),
        case("pgpass-star", "*:*:*:postgres:$S\n", PASSWORD),
        case("pgpass-ip", "# comment\n10.0.0.5:6432:*:reporter:$S", NAME_SHAPED),
        case("pgpass-heredoc", "cat > ~/.pgpass <<EOF\nlocalhost:5432:app:app:$S\nEOF\n", PASSWORD),
        case("go-mysql-dsn", 'db, err := sql.Open("mysql", "app:$S@tcp(127.0.0.1:3306)/shop")', PASSWORD),
        case("yaml-mysql-dsn", "dsn: app:$S@unix(/tmp/mysql.sock)/shop?parseTime=true\n", PASSWORD),
        case("htpasswd-sha", "alice:$S\n", "{SHA}W6ph5Mm5Pz8GgiULbPgzG37mj9g="),
        case("ldif-ssha", "dn: cn=x\nuserPassword:: $S\n", "{SSHA}h6Kq7Nf2bD0Jm3Yv9xT1wPzR4sUeA5cG"),
    ],
)
def test_a_credential_file_line_with_no_key_gives_its_password(text: str, secret: str) -> None:
    assert caught(text, secret)


@pytest.mark.parametrize(
    "text",
    [
        "12:30:45:100:done\n",  # a time, not a host
        "2024-01-01 10:00:00:123:x:y\n",
        "std::vector<int>:1:a:b:c\n",
        "localhost:5432:app:app:*\n",  # a mask
        "a:b:c:d:e\n",  # no port
        "{SHA}\n",
        'dsn := "user:password@tcp(localhost:3306)/db"',  # documentation's default
        'fmt.Sprintf("%s:%s@tcp(%s)/%s", u, p, h, d)',
    ],
)
def test_colon_lines_that_are_no_pgpass_line_stay_readable(text: str) -> None:
    assert redact(text) == text


LOWER_TOKEN = "h7k3j9xq7m4t8w2n5r6b1c0v9z8y7x6w5v4u3ts"


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        case("shell", "tool upload pkg.tgz $S --source https://registry.example.com/", LOWER_TOKEN),
        case("yaml", 'postmark: "$S"\n', "a7d3k9x2m4q8w1n6r5t0y3u7i2o9p4l8"),
        case("json", '{"id": 3, "value": "$S"}', LOWER_TOKEN),
        case("python", 'client = Client("$S")', LOWER_TOKEN),
        case("hcl", 'provider "x" {\n  value = "$S"\n}', LOWER_TOKEN),
    ],
)
def test_a_lower_case_random_token_with_no_word_beside_it_is_redacted(text: str, secret: str) -> None:
    """A run of lower-case letters and digits that clears the floor a token beside a credential word
    must clear (24+, 4+ of each, not hex, near-maximal entropy, not pronounceable)."""
    assert caught(text, secret)


@pytest.mark.parametrize(
    "text",
    [
        "/nix/store/8a5ls4ajwsl7l9k3y2zx1h2q0m7v4b6c-python3-3.11.7",  # a store path's hash
        "sha256: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",  # hex: a digest
        '"Name": "to-list-running-jobs-1481154202164"',  # words and a time
        "AccountId: RAAR3R22XSH46S3PWLC3NJAWKM",  # upper case: an id's base32
        "package: supercalifragilisticexpialidocious2024build",  # pronounceable
        "id: 873282ed-xmpl-4dc8-a069-d0c647e470c6",
        "https://host.example.com/a7d3k9x2m4q8w1n6r5t0y3u7i2o9p4l8/index.html",  # a URL's path
    ],
)
def test_digests_ids_paths_and_words_of_one_case_stay_readable(text: str) -> None:
    assert redact(text) == text
