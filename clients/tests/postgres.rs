//! The PostgreSQL client on real clusters whose every login needs a
//! password checked with SCRAM-SHA-256, one of them only over TLS: the
//! lab's statements answered as the engine's model answers them
//! (`engine/src/sim/db.rs`), the row lock's waits (`NOWAIT`, `SKIP LOCKED`,
//! `lock_timeout`, the client's own timeout), a session the server ends
//! when it idles in a transaction, too many clients, and errors that keep
//! their SQLSTATE.

#[allow(dead_code, reason = "each test file uses the part of the servers it needs")]
mod support;

use locklab_clients::postgres::LAB_TABLES;
use locklab_clients::{PostgresEndpoint, PostgresError, PostgresSession, SessionSettings};
use locklab_engine::event::{RowWrite, Sql, SqlError, SqlOutcome};
use locklab_engine::ids::{Period, ReportOf, RunId, Token};
use locklab_engine::scenario::{DbWait, LockStrength};
use std::time::{Duration, Instant};
use support::{Certificates, Postgres, SERVER_NAME, Scratch, loopback};

const LIMIT: Duration = Duration::from_secs(5);

fn endpoint(url: &str) -> PostgresEndpoint {
    PostgresEndpoint::parse(url).expect("a valid URL")
}

/// Whether a plain login with `password` is taken: the cluster is up.
fn takes_logins(port: u16, password: &str) -> bool {
    let url = format!("postgres://postgres:{password}@127.0.0.1:{port}/postgres?sslmode=disable");
    PostgresSession::connect(&endpoint(&url), &SessionSettings::default(), LIMIT).is_ok()
}

/// A cluster that requires SCRAM, with the lab's tables, and its URL.
fn lab_cluster(settings: &[String]) -> (Postgres, String) {
    let cluster = Postgres::start(None, settings, None, takes_logins);
    let url = format!("postgres://postgres:{}@127.0.0.1:{}/postgres", cluster.password, cluster.port);
    let mut admin = session(&url, &SessionSettings::default());
    admin.batch(LAB_TABLES, LIMIT).expect("the lab's tables");
    (cluster, url)
}

fn session(url: &str, settings: &SessionSettings) -> PostgresSession {
    PostgresSession::connect(&endpoint(url), settings, LIMIT).unwrap_or_else(|error| panic!("{url}: {error}"))
}

/// Plays `sql` and says what the engine would be told.
fn play(session: &mut PostgresSession, sql: Sql) -> SqlOutcome {
    session.execute(sql, LIMIT).unwrap_or_else(|error| panic!("{sql}: {error}"))
}

fn write(period: u32, report: ReportOf, run: u32, token: Option<u64>, how: RowWrite) -> Sql {
    Sql::WriteReport { period: Period(period), report, run: RunId(run), token: token.map(Token), how }
}

fn exists(period: u32, report: ReportOf) -> Sql {
    Sql::ReportExists { period: Period(period), report }
}

fn lock(strength: LockStrength, wait: DbWait) -> Sql {
    Sql::LockJobRow { strength, wait }
}

#[test]
fn a_postgresql_that_requires_scram_takes_the_password_and_refuses_a_wrong_one() {
    let (cluster, url) = lab_cluster(&[]);
    let mut admin = session(&url, &SessionSettings::default());
    let methods = admin.batch("SELECT DISTINCT auth_method FROM pg_hba_file_rules", LIMIT).expect("pg_hba rules");
    assert_eq!(methods.rows, [[Some("scram-sha-256".to_owned())]], "every login is checked with SCRAM");
    let stored =
        admin.batch("SELECT rolpassword LIKE 'SCRAM-SHA-256$%' FROM pg_authid WHERE rolname = 'postgres'", LIMIT);
    assert_eq!(stored.expect("pg_authid").first_value(), Some("t"), "the password is stored as a SCRAM verifier");
    assert!(admin.server_version(LIMIT).expect("the version").starts_with("15"));
    let refused = |url: String| PostgresSession::connect(&endpoint(&url), &SessionSettings::default(), LIMIT);
    let wrong = refused(format!("postgres://postgres:wrong@127.0.0.1:{}/postgres", cluster.port)).expect_err("refused");
    assert_eq!(wrong.sqlstate(), Some("28P01"), "{wrong}");
    assert_eq!(wrong.sql_error(Sql::Connect), None, "a wrong password is not something the engine models");
    let missing = refused(format!("postgres://postgres@127.0.0.1:{}/postgres", cluster.port)).expect_err("refused");
    assert!(matches!(&missing, PostgresError::Client(why) if why.contains("password missing")), "{missing}");
    let no_database = refused(format!("{url}_missing")).expect_err("refused");
    assert_eq!(no_database.sqlstate(), Some("3D000"), "{no_database}");
}

#[test]
fn the_report_row_answers_as_the_engine_models_it() {
    let (_cluster, url) = lab_cluster(&[]);
    let mut lab =
        session(&url, &SessionSettings { application_name: Some("locklab-test".to_owned()), ..Default::default() });
    let period = |period| ReportOf::Period(Period(period));
    assert_eq!(play(&mut lab, exists(0, period(0))), SqlOutcome::Rows(0));
    assert_eq!(play(&mut lab, write(0, period(0), 1, None, RowWrite::Upsert)), SqlOutcome::Rows(1));
    assert_eq!(
        play(&mut lab, write(0, period(0), 2, None, RowWrite::Upsert)),
        SqlOutcome::Rows(1),
        "the last writer wins"
    );
    assert_eq!(play(&mut lab, exists(0, period(0))), SqlOutcome::Rows(1));
    assert_eq!(play(&mut lab, write(0, period(0), 3, None, RowWrite::InsertOrNothing)), SqlOutcome::Rows(0));
    assert_eq!(play(&mut lab, write(1, period(1), 3, None, RowWrite::InsertOrNothing)), SqlOutcome::Rows(1));
    // The day's row under the fence: a lower token, or none, is refused and
    // told the row's. (A run writes per-period rows or the day's, never both:
    // each is unique per period too.)
    assert_eq!(lab.batch("DELETE FROM reports", LIMIT).map(|rows| rows.affected), Ok(2));
    let day = ReportOf::Day(0);
    assert_eq!(play(&mut lab, write(0, day, 1, Some(5), RowWrite::FencedUpsert)), SqlOutcome::Rows(1));
    let stale = SqlOutcome::StaleToken { highest: Token(5) };
    assert_eq!(play(&mut lab, write(0, day, 2, Some(4), RowWrite::FencedUpsert)), stale);
    assert_eq!(play(&mut lab, write(0, day, 2, None, RowWrite::FencedUpsert)), stale);
    assert_eq!(
        play(&mut lab, write(0, day, 1, Some(5), RowWrite::FencedUpsert)),
        SqlOutcome::Rows(1),
        "an equal token passes"
    );
    assert_eq!(play(&mut lab, write(1, day, 3, Some(6), RowWrite::FencedUpsert)), SqlOutcome::Rows(1));
    assert_eq!(play(&mut lab, exists(1, day)), SqlOutcome::Rows(1), "the day's row reflects period 1");
    assert_eq!(play(&mut lab, exists(2, day)), SqlOutcome::Rows(0), "but not period 2");
    // A row written without a token takes a fenced write (the engine's rule).
    assert_eq!(play(&mut lab, write(7, ReportOf::Day(1), 1, None, RowWrite::Upsert)), SqlOutcome::Rows(1));
    assert_eq!(play(&mut lab, write(7, ReportOf::Day(1), 2, Some(3), RowWrite::FencedUpsert)), SqlOutcome::Rows(1));
    let rows = lab.batch("SELECT day, period, run, token FROM reports ORDER BY day", LIMIT);
    let text = |values: &[&str]| values.iter().map(|value| Some((*value).to_owned())).collect::<Vec<_>>();
    assert_eq!(rows.expect("the rows").rows, [text(&["0", "1", "3", "6"]), text(&["1", "7", "2", "3"])]);
    // A value its column cannot hold is refused before it is sent, by name.
    let too_large = lab.execute(write(0, period(0), u32::MAX, None, RowWrite::Upsert), LIMIT);
    assert!(
        matches!(&too_large, Err(PostgresError::Statement(why)) if why.contains("run 4294967295")),
        "{too_large:?}"
    );
    // A statement the engine never sends on an open session is refused, not sent.
    assert!(matches!(lab.execute(Sql::Connect, LIMIT), Err(PostgresError::Statement(_))));
}

#[test]
fn the_jobs_row_lock_waits_as_the_engine_models_it() {
    let (_cluster, url) = lab_cluster(&[]);
    let plain = SessionSettings::default();
    let (mut holder, mut other) = (session(&url, &plain), session(&url, &plain));
    assert_eq!(play(&mut holder, lock(LockStrength::ForUpdate, DbWait::Block)), SqlOutcome::Rows(1));
    let refused = SqlOutcome::Error(SqlError::LockNotAvailable);
    assert_eq!(play(&mut other, lock(LockStrength::ForUpdate, DbWait::Nowait)), refused);
    assert_eq!(play(&mut other, Sql::Rollback), SqlOutcome::Rows(0));
    assert_eq!(play(&mut other, lock(LockStrength::ForNoKeyUpdate, DbWait::SkipLocked)), SqlOutcome::Rows(0));
    assert_eq!(play(&mut other, Sql::Rollback), SqlOutcome::Rows(0));
    // The server's lock_timeout cancels the wait: the same SQLSTATE as NOWAIT's, the engine's other name.
    let short = SessionSettings { lock_timeout: Some(Duration::from_millis(100)), ..Default::default() };
    let mut impatient = session(&url, &short);
    let outcome = play(&mut impatient, lock(LockStrength::ForNoKeyUpdate, DbWait::Block));
    assert_eq!(outcome, SqlOutcome::Error(SqlError::LockTimeout));
    assert_eq!(play(&mut impatient, Sql::Rollback), SqlOutcome::Rows(0));
    // The client's own limit: the statement still waits on the server, the caller does not.
    let asked = Instant::now();
    let outcome = other.execute(lock(LockStrength::ForUpdate, DbWait::Block), Duration::from_millis(200));
    assert_eq!(outcome, Ok(SqlOutcome::Error(SqlError::Timeout)));
    assert!(asked.elapsed() < Duration::from_secs(2), "the limit was kept: {:?}", asked.elapsed());
    assert_eq!(play(&mut holder, Sql::Commit), SqlOutcome::Rows(0));
    // The waiting statement got the row once the holder committed; its late answer is dropped, not taken for the next.
    assert_eq!(play(&mut other, Sql::Rollback), SqlOutcome::Rows(0));
    // Other services' inserts check the foreign key with FOR KEY SHARE: not held up by FOR NO KEY UPDATE, held up by FOR UPDATE.
    let insert = "INSERT INTO job_events (job) VALUES ('daily-report')";
    assert_eq!(play(&mut holder, lock(LockStrength::ForNoKeyUpdate, DbWait::Block)), SqlOutcome::Rows(1));
    assert_eq!(other.batch(insert, LIMIT).map(|rows| rows.affected), Ok(1));
    assert_eq!(play(&mut holder, Sql::Commit), SqlOutcome::Rows(0));
    assert_eq!(play(&mut holder, lock(LockStrength::ForUpdate, DbWait::Block)), SqlOutcome::Rows(1));
    let blocked = other.batch(&format!("SET statement_timeout = 100; {insert}"), LIMIT).expect_err("cancelled");
    assert_eq!(blocked.sqlstate(), Some("57014"), "the statement_timeout's cancel keeps its SQLSTATE: {blocked}");
    assert_eq!(blocked.sql_error(Sql::Commit), None);
}

#[test]
fn a_session_idle_in_a_transaction_is_ended_by_the_server_and_its_next_statement_hears_why() {
    let (_cluster, url) = lab_cluster(&[]);
    let idle =
        SessionSettings { idle_in_transaction_session_timeout: Some(Duration::from_millis(200)), ..Default::default() };
    let mut holder = session(&url, &idle);
    assert_eq!(play(&mut holder, lock(LockStrength::ForUpdate, DbWait::Block)), SqlOutcome::Rows(1));
    assert_eq!(holder.ended(), None);
    let why = holder.wait_for_end(LIMIT).expect("the server ended the session");
    assert_eq!(why.sqlstate(), Some("25P03"), "{why}");
    assert_eq!(play(&mut holder, Sql::Commit), SqlOutcome::Error(SqlError::IdleInTransactionTimeout));
    // Its row lock went with it.
    let mut next = session(&url, &SessionSettings::default());
    assert_eq!(play(&mut next, lock(LockStrength::ForUpdate, DbWait::Nowait)), SqlOutcome::Rows(1));
}

#[test]
fn a_full_server_refuses_a_session_with_the_engine_s_too_many_clients() {
    let settings = ["max_connections=3".to_owned(), "superuser_reserved_connections=0".to_owned()];
    let (_cluster, url) = lab_cluster(&settings);
    // The first of the three sessions waits until the sessions before it
    // (the start's checks) are gone, so that the server holds exactly three.
    let mut first = session(&url, &SessionSettings::default());
    let others =
        "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()";
    let deadline = Instant::now() + LIMIT;
    while first.batch(others, LIMIT).expect("pg_stat_activity").first_value() != Some("0") {
        assert!(Instant::now() < deadline, "the start's sessions did not end");
        // Polling for the condition: the server has ended the earlier sessions.
        std::thread::sleep(Duration::from_millis(10));
    }
    let sessions = [first, session(&url, &SessionSettings::default()), session(&url, &SessionSettings::default())];
    let refused = PostgresSession::connect(&endpoint(&url), &SessionSettings::default(), LIMIT).expect_err("full");
    assert_eq!(refused.sql_error(Sql::Connect), Some(SqlError::TooManyClients), "{refused}");
    assert_eq!(refused.sqlstate(), Some("53300"));
    drop(sessions);
    // Dropping a session ends it at once (Terminate), so the server has room again.
    let deadline = Instant::now() + LIMIT;
    while PostgresSession::connect(&endpoint(&url), &SessionSettings::default(), LIMIT).is_err() {
        assert!(Instant::now() < deadline, "the dropped sessions were not ended");
        // Polling for the condition: the server has ended the dropped sessions.
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn scram_over_tls_checks_the_certificate_as_sslmode_says() {
    let scratch = Scratch::new("postgres-certificates");
    let certificates = Certificates::write(&scratch);
    // Only TLS logins are taken from the network, each with SCRAM.
    let hba = "local all all scram-sha-256\nhostssl all all 127.0.0.1/32 scram-sha-256\n";
    let cluster = Postgres::start(Some(hba), &[], Some(&certificates), |port, password| {
        let url = format!("postgres://postgres:{password}@127.0.0.1:{port}/postgres?sslmode=require");
        PostgresSession::connect(&endpoint(&url), &SessionSettings::default(), LIMIT).is_ok()
    });
    let (port, password) = (cluster.port, cluster.password.clone());
    let url = |host: &str, mode: &str, authority: &std::path::Path| {
        let url = format!(
            "postgres://postgres:{password}@{host}:{port}/postgres?sslmode={mode}&sslrootcert={}",
            authority.display()
        );
        endpoint(&url).via(loopback(port))
    };
    let connect = |endpoint: PostgresEndpoint| PostgresSession::connect(&endpoint, &SessionSettings::default(), LIMIT);
    let mut checked = connect(url(SERVER_NAME, "verify-full", &certificates.authority)).expect("verify-full");
    let encrypted =
        checked.batch("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()", LIMIT).expect("pg_stat_ssl");
    assert_eq!(encrypted.first_value(), Some("t"), "the session is encrypted");
    checked.batch(LAB_TABLES, LIMIT).expect("the lab's tables");
    assert_eq!(play(&mut checked, exists(0, ReportOf::Day(0))), SqlOutcome::Rows(0));
    // verify-ca checks the chain, not the name; verify-full both.
    connect(url("other.locklab.test", "verify-ca", &certificates.authority)).expect("verify-ca ignores the name");
    let other_name = connect(url("other.locklab.test", "verify-full", &certificates.authority)).expect_err("refused");
    assert!(matches!(&other_name, PostgresError::Tls(why) if why.contains("not valid for name")), "{other_name}");
    let unknown = connect(url(SERVER_NAME, "verify-ca", &certificates.other_authority)).expect_err("refused");
    assert!(matches!(&unknown, PostgresError::Tls(why) if why.contains("UnknownIssuer")), "{unknown}");
    // require without a CA file encrypts and checks nothing, as libpq does.
    let unchecked = format!("postgres://postgres:{password}@127.0.0.1:{port}/postgres?sslmode=require");
    connect(endpoint(&unchecked)).expect("require");
    // Without TLS the server has no rule to let the login in: its refusal keeps its SQLSTATE.
    let plain = format!("postgres://postgres:{password}@127.0.0.1:{port}/postgres?sslmode=disable");
    let refused = connect(endpoint(&plain)).expect_err("refused");
    assert_eq!(refused.sqlstate(), Some("28000"), "{refused}");
}
