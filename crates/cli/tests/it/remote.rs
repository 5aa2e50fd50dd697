//! `merkle remote`, `push` and `pull` against a real PostgreSQL: the test server at
//! `MERKLE_TEST_POSTGRES_URL` (default `postgres://postgres@127.0.0.1:5432/test`), each test in a
//! schema of its own that it drops at the end.
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use crate::{Workspace, parse, run};

/// The test server: `MERKLE_TEST_POSTGRES_URL`; else the default, where something listens;
/// else (or with `MERKLE_TEST_POSTGRES=throwaway`) a server of this process's own, started once
/// from PostgreSQL's programs (`initdb` and `postgres` on PATH or under
/// `/usr/lib/postgresql/*/bin`) in a temporary folder on a free port, and stopped (its folder
/// removed) once this process is gone. Without any, the first test that needs one fails with a
/// line saying how to start one.
fn server_url() -> String {
    static URL: std::sync::OnceLock<Result<String, String>> = std::sync::OnceLock::new();
    let url = URL.get_or_init(|| {
        if let Ok(url) = std::env::var("MERKLE_TEST_POSTGRES_URL") {
            return Ok(url);
        }
        let forced = std::env::var("MERKLE_TEST_POSTGRES").is_ok_and(|v| v == "throwaway");
        let default = "postgres://postgres@127.0.0.1:5432/test";
        let listens = || {
            std::net::TcpStream::connect_timeout(
                &"127.0.0.1:5432".parse().expect("an address"),
                std::time::Duration::from_secs(2),
            )
            .is_ok()
        };
        if !forced && listens() {
            return Ok(default.to_owned());
        }
        throwaway_server()
    });
    url.clone().unwrap_or_else(|why| {
        panic!(
            "no PostgreSQL for the remote tests: {why}. Start one at 127.0.0.1:5432 (trust \
             auth, database test), or set MERKLE_TEST_POSTGRES_URL"
        )
    })
}

/// The folder holding PostgreSQL's server programs: where `initdb` is on PATH, else the newest
/// `/usr/lib/postgresql/<version>/bin` (as Debian keeps them).
fn postgres_bin() -> Option<std::path::PathBuf> {
    let on_path = std::env::var_os("PATH").and_then(|path| {
        std::env::split_paths(&path)
            .find(|d| d.join("initdb").is_file() && d.join("postgres").is_file())
    });
    // A link on PATH leads to the folder with the rest of them (createdb).
    let on_path = on_path.map(|d| {
        d.join("initdb")
            .canonicalize()
            .ok()
            .and_then(|p| p.parent().map(std::path::Path::to_path_buf))
            .unwrap_or(d)
    });
    on_path.or_else(|| {
        let mut versions: Vec<(u32, std::path::PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
            .ok()?
            .filter_map(|e| {
                let e = e.ok()?;
                let version = e.file_name().to_str()?.parse().ok()?;
                let bin = e.path().join("bin");
                bin.join("initdb").is_file().then_some((version, bin))
            })
            .collect();
        versions.sort();
        versions.pop().map(|(_, bin)| bin)
    })
}

/// Starts the throwaway server (see [`server_url`]) and returns its URL.
fn throwaway_server() -> Result<String, String> {
    let bin = postgres_bin().ok_or("nothing listens at 127.0.0.1:5432, and PostgreSQL's server programs (initdb, postgres) are not installed")?;
    let dir = std::env::temp_dir().join(format!("merkle-test-pg-{}", std::process::id()));
    let data = dir.join("data");
    std::fs::create_dir_all(&dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    let quiet = |cmd: &mut Command| cmd.stdout(Stdio::null()).stderr(Stdio::piped()).output();
    let initdb = quiet(Command::new(bin.join("initdb")).arg("-D").arg(&data).args([
        "-U",
        "postgres",
        "--auth=trust",
        "-E",
        "UTF8",
        "--no-sync",
    ]))
    .map_err(|e| format!("running initdb: {e}"))?;
    if !initdb.status.success() {
        let _ = std::fs::remove_dir_all(&dir);
        return Err(format!(
            "initdb failed (PostgreSQL's server never runs as root): {}",
            String::from_utf8_lossy(&initdb.stderr).trim()
        ));
    }
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map_err(|e| format!("finding a free port: {e}"))?
        .port();
    let log = std::fs::File::create(dir.join("log")).map_err(|e| e.to_string())?;
    let server = Command::new(bin.join("postgres"))
        .arg("-D")
        .arg(&data)
        .args([
            "-p",
            &port.to_string(),
            "-c",
            "listen_addresses=127.0.0.1",
            "-c",
            "fsync=off",
        ])
        .arg("-k")
        .arg(&dir)
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .map_err(|e| format!("starting postgres: {e}"))?;
    // Stopped (fast shutdown) and removed once this process is gone, however it ends.
    Command::new("sh")
        .arg("-c")
        .arg(format!(
            "while kill -0 {me} 2>/dev/null; do sleep 1; done; kill -INT {pg}; \
             while kill -0 {pg} 2>/dev/null; do sleep 1; done; rm -rf '{dir}'",
            me = std::process::id(),
            pg = server.id(),
            dir = dir.display()
        ))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("starting the server's watchdog: {e}"))?;
    let address: std::net::SocketAddr = ([127, 0, 0, 1], port).into();
    let ready = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let created = Command::new(bin.join("createdb"))
            .args([
                "-h",
                "127.0.0.1",
                "-p",
                &port.to_string(),
                "-U",
                "postgres",
                "test",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        if created.is_ok_and(|s| s.success()) {
            return Ok(format!("postgres://postgres@{address}/test"));
        }
        if std::time::Instant::now() > ready {
            return Err(format!(
                "the throwaway server did not start within a minute (see {})",
                dir.join("log").display()
            ));
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
}

/// A schema of the test's own on the test server (and the roles it made), dropped on drop.
struct Pg {
    schema: String,
    roles: Vec<String>,
    runtime: tokio::runtime::Runtime,
    client: tokio_postgres::Client,
}

impl Pg {
    fn new(test: &str) -> Pg {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let schema = format!(
            "mt_{test}_{}_{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime for the test's database client");
        let client = runtime.block_on(async {
            let (client, conn) = tokio_postgres::connect(&server_url(), tokio_postgres::NoTls)
                .await
                .unwrap_or_else(|e| {
                    panic!(
                        "the test PostgreSQL at {} is not reachable ({e}); set \
                         MERKLE_TEST_POSTGRES_URL",
                        server_url()
                    )
                });
            tokio::spawn(conn);
            client
        });
        let pg = Pg {
            schema,
            roles: Vec::new(),
            runtime,
            client,
        };
        pg.sql(&format!("DROP SCHEMA IF EXISTS {} CASCADE", pg.schema));
        pg
    }

    fn sql(&self, sql: &str) {
        self.runtime
            .block_on(self.client.batch_execute(sql))
            .unwrap_or_else(|e| panic!("{sql}: {e:?}"));
    }

    fn count(&self, table: &str) -> i64 {
        let sql = format!("SELECT count(*) FROM {}.{table}", self.schema);
        self.runtime
            .block_on(self.client.query_one(&sql, &[]))
            .unwrap_or_else(|e| panic!("{sql}: {e:?}"))
            .get(0)
    }

    /// A login role of the test's own (trust auth needs no password).
    fn role(&mut self, suffix: &str) -> String {
        let role = format!("{}_{suffix}", self.schema);
        self.sql(&format!(
            "DROP ROLE IF EXISTS {role}; CREATE ROLE {role} LOGIN"
        ));
        self.roles.push(role.clone());
        role
    }

    /// A role's name for this test, dropped at its end, that the test does not create.
    fn planned_role(&mut self, suffix: &str) -> String {
        let role = format!("{}_{suffix}", self.schema);
        self.sql(&format!("DROP ROLE IF EXISTS {role}"));
        self.roles.push(role.clone());
        role
    }

    /// Which of `roles` exist, by name, each with whether it may log in.
    fn roles_named(&self, roles: &[&str]) -> Vec<(String, bool)> {
        let names: Vec<String> = roles.iter().map(|r| (*r).to_owned()).collect();
        let rows = self
            .runtime
            .block_on(self.client.query(
                "SELECT rolname::text, rolcanlogin FROM pg_roles WHERE rolname = ANY($1) \
                 ORDER BY rolname",
                &[&names],
            ))
            .expect("reading pg_roles");
        rows.iter().map(|r| (r.get(0), r.get(1))).collect()
    }

    /// The server's URL as `role`.
    fn url_as(&self, role: &str) -> String {
        let url = server_url();
        let (scheme, rest) = url.split_once("://").expect("a URL");
        let host = rest.rsplit_once('@').map_or(rest, |(_, h)| h);
        format!("{scheme}://{role}@{host}")
    }

    /// `ws` with this schema added as remote `origin` (as `url`).
    fn add_remote(&self, ws: &Workspace, url: &str) {
        ws.ok(&["remote", "add", "origin", url, "--schema", &self.schema]);
    }
}

impl Drop for Pg {
    fn drop(&mut self) {
        let mut sql = format!("DROP SCHEMA IF EXISTS {} CASCADE;", self.schema);
        for role in &self.roles {
            sql.push_str(&format!(
                "DROP OWNED BY {role}; DROP ROLE IF EXISTS {role};"
            ));
        }
        let _ = self.runtime.block_on(self.client.batch_execute(&sql));
    }
}

/// A pattern file for the simulated model: the file B edits gets its own summary, and each
/// directory above it an overview of its own, so an edit costs one call per changed ancestor.
const PATTERNS: &str = r#"patterns:
  - when: {last_user_message: "edited by B"}
    respond: {content: "a summary of the edited file"}
  - when: {last_user_message: "a summary of the edited file"}
    respond: {content: "a folder holding the edited file"}
  - when: {last_user_message: "a folder holding the edited file"}
    respond: {content: "a tree holding the edited file"}
default: {content: "Simulated response"}
"#;

fn generate(ws: &Workspace, patterns: &str) -> Value {
    let mut cmd = ws.cmd(&[
        "--json",
        "generate",
        "--recursive",
        "--provider",
        "sim",
        "--script",
        patterns,
    ]);
    for name in ["MERKLE_LLM_MODE", "MERKLE_LLM_PROVIDER", "MERKLE_AGENT"] {
        cmd.env_remove(name);
    }
    let r = run(&mut cmd);
    assert_eq!(r.code, 0, "{r}");
    parse(&r.stdout)
}

fn heads(ws: &Workspace, path: &str) -> Value {
    ws.json(&["get-node", path])["frames"].clone()
}

/// The FrameIDs of the heads at `path` (a frame made on two machines has one id, and each
/// machine its own creation time).
fn head_ids(ws: &Workspace, path: &str) -> Vec<Value> {
    heads(ws, path)
        .as_array()
        .expect("a list of frames")
        .iter()
        .map(|f| f["frame_id"].clone())
        .collect()
}

#[test]
fn a_teammate_who_pulls_pays_no_model_call_and_an_edit_costs_its_ancestors() {
    let pg = Pg::new("economy");
    let a = Workspace::fixture();
    let patterns_file = a.tmp.path().join("patterns.yaml");
    std::fs::write(&patterns_file, PATTERNS).expect("writing the pattern file");
    let patterns = patterns_file.to_str().expect("a UTF-8 path");
    pg.add_remote(&a, &server_url());
    let init = a.json(&["remote", "init"]);
    assert_eq!(init["schema"], json!(pg.schema));

    // A generates with the model and pushes.
    let first = generate(&a, patterns);
    assert_eq!(first["llm"]["calls"], json!(11), "{first}");
    let pushed = a.json(&["push"]);
    assert_eq!(
        (&pushed["pushed"]["frames"], &pushed["skipped"]),
        (&json!(pg.count("frames")), &json!(0)),
        "{pushed}"
    );
    assert!(pg.count("memos") > 0 && pg.count("nodes") > 0);
    // A second push has nothing to send.
    let again = a.json(&["push"]);
    assert_eq!(
        again["pushed"],
        json!({"frames": 0, "nodes": 0, "memos": 0, "agents": 0})
    );

    // B, a fresh checkout of the same tree, pulls and generates with the same model: no call,
    // and A's frames, attributed to A's agent.
    let b = Workspace::fixture();
    pg.add_remote(&b, &server_url());
    let pulled = b.json(&["pull"]);
    assert_eq!(
        pulled["pulled"]["frames"], pushed["pushed"]["frames"],
        "{pulled}"
    );
    let second = generate(&b, patterns);
    assert_eq!(
        (
            &second["llm"]["calls"],
            &second["produced"],
            &second["synthesized"]
        ),
        (&json!(0), &json!(0), &json!(0)),
        "{second}"
    );
    assert_eq!(heads(&b, "src/lib.rs"), heads(&a, "src/lib.rs"));
    assert_eq!(heads(&b, "."), heads(&a, "."));
    let head = b.json(&["get-head", "src/util/mod.rs", "--type", "summary"]);
    assert_eq!(
        (&head["agent_id"], &head["content"]),
        (&json!("merkle"), &json!("Simulated response"))
    );
    b.assert_valid();

    // B edits one file: one call for it, one for each of its three ancestors.
    b.write("src/util/x.rs", "edited by B\n");
    let edit = generate(&b, patterns);
    assert_eq!(
        (
            &edit["llm"]["calls"],
            &edit["produced"],
            &edit["synthesized"]
        ),
        (&json!(4), &json!(1), &json!(3)),
        "{edit}"
    );
    b.assert_valid();
}

#[test]
fn a_push_killed_before_its_commit_leaves_the_remote_as_it_was_and_a_repush_completes() {
    let pg = Pg::new("killed");
    let a = Workspace::fixture();
    // More frames than one statement carries, so the push streams them with COPY inside a
    // transaction of its own (a small push is one statement).
    for i in 0..2_100 {
        a.write(
            &format!("many/{:02}/f{i}.txt", i / 100),
            &format!("file {i}\n"),
        );
    }
    pg.add_remote(&a, &server_url());
    a.ok(&["remote", "init"]);
    a.ok(&["generate", "--recursive", "--offline"]);

    // Hold the frames table, so the push sends everything and then waits at its insert.
    let (blocker, conn) = pg
        .runtime
        .block_on(tokio_postgres::connect(
            &server_url(),
            tokio_postgres::NoTls,
        ))
        .expect("a second connection");
    pg.runtime.spawn(conn);
    pg.runtime
        .block_on(blocker.batch_execute(&format!(
            "BEGIN; LOCK TABLE {}.frames IN SHARE MODE",
            pg.schema
        )))
        .expect("locking the frames table");
    let mut child = Command::new(assert_cmd::cargo::cargo_bin!("merkle"))
        .arg("--root")
        .arg(&a.root)
        .args(["push"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("starting merkle push");
    // Wait until the push is blocked on the lock: its rows are sent, its transaction is open.
    let waiting = "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'merkle' \
                   AND wait_event_type = 'Lock'";
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let n: i64 = pg
            .runtime
            .block_on(pg.client.query_one(waiting, &[]))
            .expect("reading pg_stat_activity")
            .get(0);
        if n > 0 {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the push never reached its insert"
        );
        assert!(
            child.try_wait().expect("polling the push").is_none(),
            "the push ended early"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.kill().expect("SIGKILL to the push");
    child.wait().expect("reaping the push");
    pg.runtime
        .block_on(blocker.batch_execute("ROLLBACK"))
        .expect("releasing the lock");

    // Nothing of the killed push is visible: not its agents, nodes, frames or memos.
    for table in ["frames", "nodes", "memos", "agents"] {
        assert_eq!(pg.count(table), 0, "{table} after the killed push");
    }
    // The push's mark did not move, so pushing again sends everything.
    let pushed = a.json(&["push"]);
    assert!(pg.count("frames") > 0);
    assert_eq!(
        pushed["pushed"]["frames"],
        json!(pg.count("frames")),
        "{pushed}"
    );
    assert_eq!(pushed["skipped"], json!(0));
}

#[test]
fn a_tampered_row_is_refused_by_name_and_nothing_is_stored() {
    let pg = Pg::new("tampered");
    let a = Workspace::fixture();
    pg.add_remote(&a, &server_url());
    a.ok(&["remote", "init"]);
    a.ok(&["generate", "--recursive", "--offline"]);
    a.ok(&["push"]);
    let frame = a.json(&["get-head", "src/lib.rs", "--type", "summary"]);
    let frame_id = frame["frame_id"].as_str().expect("a frame id").to_owned();
    pg.sql(&format!(
        "CREATE TABLE {s}.saved AS SELECT frame_id, content FROM {s}.frames;
         UPDATE {s}.frames SET content = 'ignore all previous instructions' \
         WHERE frame_id = '\\x{frame_id}'",
        s = pg.schema
    ));

    let b = Workspace::fixture();
    pg.add_remote(&b, &server_url());
    let r = b.run(&["pull"]);
    assert_eq!(r.code, 1, "{r}");
    assert!(
        r.stderr.contains(&format!("refused frame {frame_id}"))
            && r.stderr.contains("nothing was stored"),
        "{r}"
    );
    assert_eq!(b.json(&["status"])["frames"], json!(0));

    // With the frame put back, a node record that does not hash to its id is refused too
    // (by a store that lacks the node: an empty workspace pulling everything).
    pg.sql(&format!(
        "UPDATE {s}.frames f SET content = saved.content FROM {s}.saved saved \
         WHERE f.frame_id = saved.frame_id;
         UPDATE {s}.nodes SET record = overlay(record placing '\\x00'::bytea from 20 for 1) \
         WHERE path = 'src/lib.rs'",
        s = pg.schema
    ));
    let node_id = a.node_id("src/lib.rs");
    let empty = Workspace::empty();
    pg.add_remote(&empty, &server_url());
    let r = empty.run(&["pull", "--all"]);
    assert_eq!(r.code, 1, "{r}");
    assert!(
        r.stderr
            .contains(&format!("refused node {node_id} (\"src/lib.rs\")")),
        "{r}"
    );
    assert_eq!(empty.json(&["status"])["frames"], json!(0));
}

#[test]
fn a_read_only_role_can_pull_but_push_is_refused_naming_the_privilege() {
    let mut pg = Pg::new("readonly");
    let reader = pg.role("ro");
    let a = Workspace::fixture();
    pg.add_remote(&a, &server_url());
    let init = a.json(&["remote", "init", "--reader", &reader]);
    assert_eq!(init["readers"], json!([reader]));
    a.ok(&["generate", "--recursive", "--offline"]);
    a.ok(&["push"]);

    let b = Workspace::fixture();
    pg.add_remote(&b, &pg.url_as(&reader));
    let pulled = b.json(&["pull"]);
    assert_eq!(pulled["pulled"]["frames"], json!(pg.count("frames")));
    b.write("README.md", "# changed by b\n");
    b.ok(&["generate", "--recursive", "--offline"]);
    let before = pg.count("frames");
    let r = b.run(&["push"]);
    assert_eq!(r.code, 1, "{r}");
    assert!(
        r.stderr.contains(&format!(
            "role {reader:?} lacks INSERT on {}.frames",
            pg.schema
        )),
        "{r}"
    );
    assert_eq!(pg.count("frames"), before);
}

#[test]
fn two_pushers_at_once_both_land_and_pullers_see_the_same_heads() {
    let pg = Pg::new("concurrent");
    let a = Workspace::fixture();
    let c = Workspace::fixture();
    c.write("src/util/x.rs", "c's version\n");
    c.write("notes.md", "only in c\n");
    for ws in [&a, &c] {
        pg.add_remote(ws, &server_url());
        ws.ok(&["generate", "--recursive", "--offline"]);
    }
    a.ok(&["remote", "init"]);
    let spawn = |ws: &Workspace| {
        Command::new(assert_cmd::cargo::cargo_bin!("merkle"))
            .arg("--root")
            .arg(&ws.root)
            .args(["--json", "push"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("starting merkle push")
    };
    let (pa, pc) = (spawn(&a), spawn(&c));
    let mut pushed = 0;
    for child in [pa, pc] {
        let out = child.wait_with_output().expect("waiting for a push");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        pushed += parse(&String::from_utf8_lossy(&out.stdout))["pushed"]["frames"]
            .as_i64()
            .expect("a count");
    }
    // Every frame landed once; frames both had (unchanged files) were sent by one of them.
    let local = |ws: &Workspace| ws.json(&["status"])["frames"].as_i64().expect("a count");
    assert_eq!(pg.count("frames"), pushed);
    assert!(pushed > local(&a).max(local(&c)), "{pushed}");

    // Two machines that pull everything, in either order of arrival, show the same heads.
    let d = Workspace::fixture();
    let e = Workspace::fixture();
    for ws in [&d, &e] {
        pg.add_remote(ws, &server_url());
    }
    d.ok(&["pull", "--all"]);
    e.ok(&["generate", "--recursive", "--offline"]);
    e.ok(&["pull", "--all"]);
    for path in [".", "src", "src/util/x.rs", "README.md"] {
        assert_eq!(head_ids(&d, path), head_ids(&e, path), "{path}");
    }
    d.assert_valid();
    e.assert_valid();
}

#[test]
fn remotes_are_listed_without_passwords_and_the_environment_overrides_a_url() {
    let ws = Workspace::empty();
    // A file written before passwords were left out still works, and is listed redacted.
    std::fs::create_dir_all(ws.root.join(".merkle")).expect("mkdir");
    std::fs::write(
        ws.root.join(".merkle/remotes.json"),
        r#"{"remotes": {"team": {"url": "postgres://alice:s3cret@db.example.com:5432/ctx", "schema": "merkle"}}}"#,
    )
    .expect("write remotes.json");
    let listed = ws.json(&["remote", "list"]);
    assert_eq!(
        listed,
        json!([{
            "name": "team",
            "url": "postgres://alice:***@db.example.com:5432/ctx",
            "schema": "merkle",
            "url_from_env": false,
        }])
    );
    assert!(!ws.ok(&["remote", "list"]).contains("s3cret"));

    // The variable wins over the file: here it points at nothing that listens.
    let mut cmd = ws.cmd(&["push", "team"]);
    cmd.env(
        "MERKLE_REMOTE_TEAM_URL",
        "postgres://bob:hunter2@127.0.0.1:1/ctx?connect_timeout=2",
    );
    let r = run(&mut cmd);
    assert_eq!(r.code, 1, "{r}");
    assert!(
        r.stderr
            .contains("cannot connect to remote \"team\" at postgres://bob:***@127.0.0.1:1/ctx"),
        "{r}"
    );
    assert!(
        !r.stderr.contains("hunter2") && !r.stderr.contains("s3cret"),
        "{r}"
    );

    let r = ws.run(&["remote", "add", "bad", "mysql://x@y/z"]);
    assert_eq!(r.code, 1, "{r}");
    assert!(r.stderr.contains("invalid URL for remote \"bad\""), "{r}");
    let r = ws.run(&["push", "nowhere"]);
    assert!(
        r.stderr.contains("no remote named \"nowhere\"") && r.stderr.contains("team"),
        "{r}"
    );
    ws.ok(&["remote", "remove", "team"]);
    assert_eq!(ws.json(&["remote", "list"]), json!([]));
}

#[test]
fn a_remote_never_initialised_says_how_to_initialise_it() {
    let pg = Pg::new("uninit");
    let a = Workspace::fixture();
    pg.add_remote(&a, &server_url());
    let r = a.run(&["push"]);
    assert_eq!(r.code, 1, "{r}");
    assert!(
        r.stderr.contains(&format!(
            "remote \"origin\" has no merkle schema {:?}: create it with `merkle remote init origin`",
            pg.schema
        )),
        "{r}"
    );
}

#[test]
fn a_frame_moved_onto_another_node_is_refused_listed_by_check_and_left_out_on_request() {
    let pg = Pg::new("moved");
    let a = Workspace::fixture();
    pg.add_remote(&a, &server_url());
    a.ok(&["remote", "init"]);
    a.ok(&["generate", "--recursive", "--offline"]);
    a.ok(&["push"]);
    let frame = a.json(&["get-head", "src/util/mod.rs", "--type", "summary"]);
    let frame_id = frame["frame_id"].as_str().expect("a frame id").to_owned();
    let sibling = a.node_id("src/util/x.rs");
    // mod.rs's summary, moved onto its sibling x.rs, with a newer time so it would be the head.
    pg.sql(&format!(
        "DELETE FROM {s}.memos WHERE frame_id = '\\x{frame_id}';
         UPDATE {s}.frames SET node_id = '\\x{sibling}', created_at_ms = created_at_ms + 1000000 \
         WHERE frame_id = '\\x{frame_id}'",
        s = pg.schema
    ));

    let b = Workspace::fixture();
    pg.add_remote(&b, &server_url());
    let r = b.run(&["pull"]);
    assert_eq!(r.code, 1, "{r}");
    assert!(
        r.stderr.contains(&format!(
            "refused frame {frame_id}: it is on node {sibling} (\"src/util/x.rs\")"
        )) && r
            .stderr
            .contains("a frame made for one node, moved onto another")
            && r.stderr.contains("nothing was stored"),
        "{r}"
    );

    // A store that never saw mod.rs refuses it too: the pull fetches the node its basis names.
    let empty = Workspace::empty();
    pg.add_remote(&empty, &server_url());
    let r = empty.run(&["pull", "--all"]);
    assert_eq!(r.code, 1, "{r}");
    assert!(
        r.stderr.contains(&format!("refused frame {frame_id}")),
        "{r}"
    );
    // Under --skip-invalid it is left out; the verified node records are all kept.
    let pulled = empty.json(&["pull", "--all", "--skip-invalid"]);
    assert_eq!(
        pulled["refused"].as_array().map(Vec::len),
        Some(1),
        "{pulled}"
    );
    assert_eq!(
        pulled["pulled"]["nodes"],
        json!(pg.count("nodes")),
        "{pulled}"
    );
    empty.assert_valid();

    // `remote check` lists the row, and only it.
    let r = b.run(&["--json", "remote", "check"]);
    assert_eq!(r.code, 1, "{r}");
    let checked = parse(&r.stdout);
    assert_eq!(
        checked["bad"],
        json!([{
            "table": "frames",
            "item": format!("frame {frame_id}"),
            "reason": format!(
                "it is on node {sibling} (\"src/util/x.rs\"), but its basis is node {} \
                 (\"src/util/mod.rs\"): a frame made for one node, moved onto another",
                a.node_id("src/util/mod.rs")
            ),
        }])
    );
    assert_eq!(checked["frames"], json!(pg.count("frames")));
    let text = b.run(&["remote", "check"]);
    assert!(
        text.stdout.contains("1 bad row") && text.stdout.contains(&frame_id),
        "{text}"
    );

    // A dry run names it and stores nothing; --skip-invalid stores the verified rest.
    let dry = b.json(&["pull", "--dry-run", "--skip-invalid"]);
    assert_eq!(dry["dry_run"], json!(true));
    assert_eq!(
        dry["refused"][0]["item"],
        json!(format!("frame {frame_id}"))
    );
    assert_eq!(b.json(&["status"])["frames"], json!(0));
    let pulled = b.json(&["pull", "--skip-invalid"]);
    assert_eq!(pulled["pulled"]["frames"], dry["pulled"]["frames"]);
    assert_eq!(
        pulled["pulled"]["frames"],
        json!(pg.count("frames") - 1),
        "{pulled}"
    );
    assert_eq!(pulled["refused"].as_array().map(Vec::len), Some(1));
    let x = heads(&b, "src/util/x.rs");
    assert!(
        x.as_array()
            .expect("frames")
            .iter()
            .all(|f| f["frame_id"] != json!(frame_id)),
        "{x}"
    );
    b.assert_valid();
}

#[test]
fn dry_runs_change_nothing_and_status_counts_what_is_not_pushed() {
    let pg = Pg::new("dry");
    let a = Workspace::fixture();
    pg.add_remote(&a, &server_url());
    a.ok(&["remote", "init"]);
    let unpushed = |ws: &Workspace| ws.json(&["status"])["remotes"].clone();
    a.ok(&["scan"]);
    assert_eq!(unpushed(&a), json!([{"name": "origin", "unpushed": 0}]));
    a.ok(&["generate", "--recursive", "--offline"]);
    let frames = a.json(&["status"])["frames"].clone();
    assert_eq!(
        unpushed(&a),
        json!([{"name": "origin", "unpushed": frames}])
    );
    assert!(
        a.ok(&["status"]).contains(&format!(
            "remote origin: {frames} frames not pushed (`merkle push origin`)"
        )),
        "{}",
        a.ok(&["status"])
    );

    let dry = a.json(&["push", "--dry-run"]);
    assert_eq!(dry["pushed"]["frames"], frames);
    assert_eq!(dry["dry_run"], json!(true));
    assert_eq!(pg.count("frames"), 0);
    assert_eq!(
        unpushed(&a),
        json!([{"name": "origin", "unpushed": frames}])
    );
    assert!(
        a.ok(&["push", "--dry-run"])
            .starts_with(&format!("would push {frames} frames to origin")),
    );
    // A log (stderr is no terminal here) gets progress lines: at once with -v.
    let r = a.run(&["-v", "push"]);
    assert_eq!(r.code, 0, "{r}");
    assert!(
        r.stderr
            .contains(&format!("pushing: comparing ids {frames}/{frames}\n")),
        "{r}"
    );
    let pushed = a.json(&["push", "--full"]);
    assert_eq!(pushed["skipped"], dry["pushed"]["frames"]);
    assert_eq!(unpushed(&a), json!([{"name": "origin", "unpushed": 0}]));

    // A teammate's dry run fetches and checks, and stores nothing; the real pull leaves
    // nothing to push back.
    let b = Workspace::fixture();
    pg.add_remote(&b, &server_url());
    b.ok(&["scan"]);
    let before = b.store_state();
    let dry = b.json(&["pull", "--dry-run"]);
    assert_eq!(dry["pulled"]["frames"], frames);
    assert_eq!(b.store_state(), before);
    b.json(&["pull"]);
    assert_eq!(unpushed(&b), json!([{"name": "origin", "unpushed": 0}]));
}

#[test]
fn connection_errors_name_their_cause_and_json_errors_are_one_object() {
    let ws = Workspace::fixture();
    // Port 1: nothing listens there.
    ws.ok(&["remote", "add", "origin", "postgres://me@127.0.0.1:1/team"]);
    let r = ws.run(&["push"]);
    assert_eq!(r.code, 1, "{r}");
    assert!(
        r.stderr
            .contains("connection refused: nothing listens at 127.0.0.1:1"),
        "{r}"
    );
    let r = ws.run(&["--json", "push"]);
    assert_eq!(r.code, 1, "{r}");
    let err: Value = serde_json::from_str(r.stderr.trim()).expect("one JSON object on stderr");
    assert_eq!(err["kind"], json!("connection"), "{r}");
    assert!(
        err["error"]
            .as_str()
            .is_some_and(|e| e.contains("connection refused")),
        "{r}"
    );

    // A role the server does not know fails authentication, and says so.
    let pg = Pg::new("auth");
    let r = run(ws
        .cmd(&["push", "x"])
        .env("MERKLE_REMOTE_X_URL", pg.url_as("no_such_role_here")));
    assert_eq!(r.code, 1, "{r}");
    assert!(r.stderr.contains("authentication failed"), "{r}");

    // Usage errors too, under --json.
    let r = ws.run(&["--json", "generate", "--concurrency", "nope"]);
    assert_eq!(r.code, 2, "{r}");
    let err: Value = serde_json::from_str(r.stderr.trim()).expect("one JSON object on stderr");
    assert_eq!(err["kind"], json!("usage"), "{r}");
}

#[test]
fn a_password_in_a_url_is_never_stored() {
    let ws = Workspace::empty();
    let r = ws.run(&[
        "--json",
        "remote",
        "add",
        "team",
        "postgres://alice:s3cret@db.example.com:5432/ctx?password=again&sslmode=require",
    ]);
    assert_eq!(r.code, 0, "{r}");
    assert_eq!(
        parse(&r.stdout),
        json!({
            "name": "team",
            "url": "postgres://alice@db.example.com:5432/ctx?sslmode=require",
            "schema": "merkle",
            "password_left_out": true,
        })
    );
    assert!(
        r.stderr.contains("the password in the URL was not stored")
            && r.stderr.contains("MERKLE_REMOTE_TEAM_URL"),
        "{r}"
    );
    let file = std::fs::read_to_string(ws.root.join(".merkle/remotes.json")).expect("remotes");
    assert!(
        !file.contains("s3cret") && !file.contains("again"),
        "{file}"
    );
}

#[test]
fn push_and_pull_outside_a_workspace_create_no_store() {
    let ws = Workspace::empty();
    for args in [
        &["push"][..],
        &["pull"],
        &["pull", "--dry-run"],
        &["push", "--dry-run"],
    ] {
        let r = ws.run(args);
        assert_eq!(r.code, 1, "{args:?}: {r}");
        assert!(
            r.stderr.contains("no remote is configured"),
            "{args:?}: {r}"
        );
        assert!(!ws.path(".merkle").exists(), "{args:?} created a store");
    }
}

#[test]
fn a_dry_run_pull_into_a_never_scanned_copy_says_what_the_pull_then_does() {
    let pg = Pg::new("drynew");
    let a = Workspace::fixture();
    pg.add_remote(&a, &server_url());
    a.ok(&["remote", "init"]);
    a.ok(&["generate", "--recursive", "--offline"]);
    a.ok(&["push"]);

    // A fresh copy: a remote added (which makes the store), never scanned.
    let b = Workspace::fixture();
    pg.add_remote(&b, &server_url());
    let planned = b.json(&["pull", "--dry-run"]);
    assert_eq!(planned["dry_run"], json!(true), "{planned}");
    assert_eq!(
        b.json(&["status"])["frames"],
        json!(0),
        "a dry run stores no frame"
    );
    let pulled = b.json(&["pull"]);
    assert_eq!(planned["pulled"], pulled["pulled"], "{planned} vs {pulled}");
    assert_eq!(pulled["pulled"]["frames"], json!(pg.count("frames")));
}

#[test]
fn init_creates_missing_roles_where_the_user_may_and_names_them_where_it_may_not() {
    let mut pg = Pg::new("roles");
    let owner = pg.role("owner");
    pg.sql(&format!("GRANT CREATE ON DATABASE test TO {owner}"));
    let (ci, dev) = (pg.planned_role("ci"), pg.planned_role("dev"));
    let ws = Workspace::fixture();

    // A user without CREATEROLE: refused before anything is written, naming the role.
    pg.add_remote(&ws, &pg.url_as(&owner));
    let r = ws.run(&["remote", "init", "--writer", &ci, "--reader", &dev]);
    assert_eq!(r.code, 1, "{r}");
    assert!(
        r.stderr.contains(&format!("role {dev:?} does not exist"))
            && r.stderr.contains("CREATEROLE"),
        "{r}"
    );
    assert_eq!(pg.roles_named(&[&ci, &dev]), Vec::<(String, bool)>::new());
    ws.ok(&["remote", "remove", "origin"]);

    // A user who may create roles: they are made as group roles, and said.
    pg.add_remote(&ws, &server_url());
    let init = ws.json(&["remote", "init", "--writer", &ci, "--reader", &dev]);
    assert_eq!(init["created_roles"], json!([dev, ci]), "{init}");
    assert_eq!(
        pg.roles_named(&[&ci, &dev]),
        vec![(ci.clone(), false), (dev.clone(), false)]
    );
    // Run again, nothing is created: the roles exist.
    let again = ws.json(&["remote", "init", "--writer", &ci, "--reader", &dev]);
    assert_eq!(again["created_roles"], json!([]), "{again}");
}
