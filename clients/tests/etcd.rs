//! The etcd client on a real etcd 3.4 member, plain and with TLS and auth:
//! the consensus strategy's lease lock answered as the engine's model
//! answers it (`engine/src/sim/consensus.rs`: the create-if-absent
//! transaction whose revision is the token, keep-alive, revoke, a lease that
//! expires and takes the key with it), a watch that sees the key go, refused
//! credentials and permissions that keep etcd's code, and a member that
//! cannot be reached or does not answer.

#[allow(dead_code, reason = "each test file uses the part of the servers it needs")]
mod support;

use locklab_clients::{EtcdClient, EtcdEndpoint, EtcdError};
use locklab_engine::event::{ConsensusOp, ConsensusReply, LEASE_KEY, Owner};
use locklab_engine::ids::{InstanceId, LeaseId, Token};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};
use support::{Certificates, Etcd, SERVER_NAME, Scratch, Silent, free_port, loopback};

const LIMIT: Duration = Duration::from_secs(5);
const ROOT_PASSWORD: &str = "root-pw";

fn owner(instance: u8, nonce: u16) -> Owner {
    Owner { instance: InstanceId(instance), nonce }
}

fn client(endpoint: &EtcdEndpoint, first_lease: u32) -> EtcdClient {
    EtcdClient::connect(endpoint, LeaseId(first_lease), LIMIT).unwrap_or_else(|error| panic!("{endpoint}: {error}"))
}

fn plain(port: u16) -> EtcdEndpoint {
    EtcdEndpoint::parse(&format!("http://127.0.0.1:{port}")).expect("a valid URL")
}

/// Plays `op` and says what the engine would be told.
fn play(client: &mut EtcdClient, op: ConsensusOp) -> ConsensusReply {
    client.execute(op, LIMIT).unwrap_or_else(|error| panic!("{op}: {error}"))
}

fn acquire(client: &mut EtcdClient, value: Owner, ttl_ms: u64) -> ConsensusReply {
    play(client, ConsensusOp::Acquire { value, ttl_ms })
}

/// Watches the lease key's deletions on a thread of its own; returns once
/// the watch is seen to work (a probe's key put and revoked until it
/// reports the probe), with the values it reports from then on.
fn watch_deletions(endpoint: &EtcdEndpoint, lab: &mut EtcdClient) -> (Receiver<String>, std::thread::JoinHandle<()>) {
    let (seen, deletions) = channel();
    let mut watcher = client(endpoint, 900);
    let watching = std::thread::spawn(move || {
        // It ends when the member stops (the test's end) or nobody listens.
        let _ =
            watcher.watch_deletions(LEASE_KEY, |value| seen.send(String::from_utf8_lossy(value).into_owned()).is_ok());
    });
    let probe = owner(9, 0xffff);
    let deadline = Instant::now() + LIMIT;
    loop {
        let ConsensusReply::Acquired { lease, .. } = acquire(lab, probe, 60_000) else { panic!("the probe's key") };
        assert_eq!(play(lab, ConsensusOp::Revoke { lease }), ConsensusReply::Revoked);
        if deletions.recv_timeout(Duration::from_millis(50)).is_ok_and(|value| value == probe.to_string()) {
            break;
        }
        assert!(Instant::now() < deadline, "the watch never saw the probe's key go");
    }
    while deletions.try_recv().is_ok() {}
    (deletions, watching)
}

#[test]
fn the_lease_lock_answers_as_the_engine_models_it() {
    let etcd = Etcd::start(None, |port| {
        EtcdClient::connect(&plain(port), LeaseId(1), LIMIT).and_then(|mut client| client.status(LIMIT)).is_ok()
    });
    let endpoint = plain(etcd.port);
    let (mut a, mut b) = (client(&endpoint, 1), client(&endpoint, 100));
    let (deletions, watching) = watch_deletions(&endpoint, &mut a);
    let (owner_a, owner_b) = (owner(0, 0x7f3a), owner(1, 0x0801));
    let ConsensusReply::Acquired { lease, revision } = acquire(&mut a, owner_a, 60_000) else {
        panic!("a takes the lock")
    };
    assert_eq!(acquire(&mut b, owner_b, 60_000), ConsensusReply::Taken { holder: owner_a });
    assert_eq!(play(&mut a, ConsensusOp::KeepAlive { lease }), ConsensusReply::Alive { ttl_ms: 60_000 });
    assert_eq!(play(&mut b, ConsensusOp::KeepAlive { lease }), ConsensusReply::LeaseNotFound, "b never held it");
    assert_eq!(play(&mut a, ConsensusOp::Revoke { lease }), ConsensusReply::Revoked);
    assert_eq!(deletions.recv_timeout(LIMIT).as_deref(), Ok(owner_a.to_string().as_str()), "the revoke took the key");
    assert_eq!(play(&mut a, ConsensusOp::Revoke { lease }), ConsensusReply::LeaseNotFound);
    // b's lease of a second, never kept alive: etcd deletes the key when it expires.
    let ConsensusReply::Acquired { lease: short, revision: later } = acquire(&mut b, owner_b, 1_000) else {
        panic!("b takes the lock")
    };
    assert!(later > revision, "the token grows: {later} after {revision}");
    assert_ne!(short, lease, "each client numbers its own leases");
    let deadline = Instant::now() + LIMIT * 2;
    let latest = loop {
        match acquire(&mut a, owner_a, 60_000) {
            ConsensusReply::Acquired { revision, .. } => break revision,
            taken => assert_eq!(taken, ConsensusReply::Taken { holder: owner_b }),
        }
        assert!(Instant::now() < deadline, "b's lease did not expire");
        // Polling for the condition: etcd has expired the lease.
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(latest > later, "the token grows: {latest} after {later}");
    assert_eq!(deletions.recv_timeout(LIMIT).as_deref(), Ok(owner_b.to_string().as_str()), "the expiry took the key");
    assert_eq!(play(&mut b, ConsensusOp::KeepAlive { lease: short }), ConsensusReply::LeaseNotFound, "etcd forgot it");
    assert!(a.key_exists(LEASE_KEY, LIMIT).expect("a range"));
    assert!(a.delete_key(LEASE_KEY, LIMIT).expect("a delete"));
    assert!(!a.key_exists(LEASE_KEY, LIMIT).expect("a range"));
    assert!(a.status(LIMIT).expect("the status").0.starts_with("3.4"));
    drop(etcd);
    watching.join().expect("the watch ends with the member");
}

#[test]
fn a_lease_key_of_the_caller_s_holds_the_lock_instead_of_the_engine_s() {
    let etcd = Etcd::start(None, |port| {
        EtcdClient::connect(&plain(port), LeaseId(1), LIMIT).and_then(|mut client| client.status(LIMIT)).is_ok()
    });
    let endpoint = plain(etcd.port);
    let key = format!("run-7:{LEASE_KEY}");
    let (mut run, mut engine) = (client(&endpoint, 1).with_lease_key(key.as_str()), client(&endpoint, 100));
    let (owner_a, owner_b) = (owner(0, 1), owner(1, 2));
    let ConsensusReply::Acquired { lease, .. } = acquire(&mut run, owner_a, 60_000) else { panic!("the run's lock") };
    assert!(run.key_exists(&key, LIMIT).expect("a range"));
    assert!(!run.key_exists(LEASE_KEY, LIMIT).expect("a range"), "the engine's key is left alone");
    // The engine's key is free for another holder; the run's stays taken.
    assert!(matches!(acquire(&mut engine, owner_b, 60_000), ConsensusReply::Acquired { .. }));
    assert_eq!(acquire(&mut run, owner_b, 60_000), ConsensusReply::Taken { holder: owner_a });
    assert_eq!(play(&mut run, ConsensusOp::Revoke { lease }), ConsensusReply::Revoked);
    assert!(!run.key_exists(&key, LIMIT).expect("a range"));
}

/// Turns etcd's auth on (it is off by default): `root`, and `reader`, who may read only elsewhere.
fn enable_auth(target: &str, tls: etcd_client::TlsOptions) {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a runtime");
    let admin = runtime.block_on(async {
        let options = etcd_client::ConnectOptions::new().with_tls(tls);
        let mut admin = etcd_client::Client::connect([target], Some(options)).await?;
        admin.user_add("root", ROOT_PASSWORD, None).await?;
        admin.user_grant_role("root", "root").await?;
        admin.role_add("reader").await?;
        admin.role_grant_permission("reader", etcd_client::Permission::read("/elsewhere")).await?;
        admin.user_add("reader", "read-pw", None).await?;
        admin.user_grant_role("reader", "reader").await?;
        admin.auth_enable().await.map(drop)
    });
    admin.unwrap_or_else(|error| panic!("cannot turn etcd's auth on: {error}"));
}

#[test]
fn tls_and_auth_keep_etcd_s_own_refusals() {
    let scratch = Scratch::new("etcd-certificates");
    let certificates = Certificates::write(&scratch);
    let authority = certificates.authority.display().to_string();
    let endpoint = |credentials: &str, host: &str, authority: &str, port: u16| {
        let url = format!("https://{credentials}{host}:{port}?cacert={authority}");
        EtcdEndpoint::parse(&url).expect("a valid URL").via(loopback(port))
    };
    let etcd = Etcd::start(Some(&certificates), |port| {
        let member = EtcdClient::connect(&endpoint("", SERVER_NAME, &authority, port), LeaseId(1), LIMIT);
        member.and_then(|mut member| member.status(LIMIT)).is_ok()
    });
    let port = etcd.port;
    let pem = std::fs::read(&certificates.authority).expect("the CA");
    let tls =
        etcd_client::TlsOptions::new().domain_name(SERVER_NAME).ca_certificate(etcd_client::Certificate::from_pem(pem));
    enable_auth(&format!("https://127.0.0.1:{port}"), tls);
    let mut root = client(&endpoint(&format!("root:{ROOT_PASSWORD}@"), SERVER_NAME, &authority, port), 1);
    let ConsensusReply::Acquired { lease, revision } = acquire(&mut root, owner(0, 1), 60_000) else {
        panic!("root takes the lock")
    };
    assert!(revision > Token(0));
    assert_eq!(play(&mut root, ConsensusOp::Revoke { lease }), ConsensusReply::Revoked);
    let refused = |endpoint: EtcdEndpoint| match EtcdClient::connect(&endpoint, LeaseId(1), LIMIT) {
        Err(error) => error,
        Ok(mut member) => {
            member.execute(ConsensusOp::Acquire { value: owner(1, 1), ttl_ms: 60_000 }, LIMIT).expect_err("refused")
        }
    };
    let status_code = |error: &EtcdError| match error {
        EtcdError::Status { code, message } if message.starts_with("etcdserver:") => code.clone(),
        other => panic!("not etcd's own refusal: {other}"),
    };
    let wrong = refused(endpoint("root:wrong@", SERVER_NAME, &authority, port));
    assert_eq!(status_code(&wrong), "InvalidArgument", "{wrong}");
    assert!(wrong.to_string().contains("authentication failed"), "{wrong}");
    let reader = refused(endpoint("reader:read-pw@", SERVER_NAME, &authority, port));
    assert_eq!(status_code(&reader), "PermissionDenied", "{reader}");
    let anonymous = refused(endpoint("", SERVER_NAME, &authority, port));
    status_code(&anonymous);
    let other_authority = certificates.other_authority.display().to_string();
    let unknown = refused(endpoint(&format!("root:{ROOT_PASSWORD}@"), SERVER_NAME, &other_authority, port));
    assert!(matches!(&unknown, EtcdError::Tls(why) if why.contains("UnknownIssuer")), "{unknown}");
    let other_name = refused(endpoint(&format!("root:{ROOT_PASSWORD}@"), "other.locklab.test", &authority, port));
    assert!(matches!(&other_name, EtcdError::Tls(why) if why.contains("not valid for name")), "{other_name}");
}

#[test]
fn a_member_that_cannot_be_reached_or_does_not_answer_is_a_call_that_failed() {
    let limit = Duration::from_millis(300);
    let op = ConsensusOp::Acquire { value: owner(0, 1), ttl_ms: 5_000 };
    let mut nobody = client(&plain(free_port()), 1);
    assert_eq!(nobody.execute(op, limit), Ok(ConsensusReply::Timeout));
    let silent = Silent::start();
    let mut hanging = client(&plain(silent.port), 1);
    let asked = Instant::now();
    assert_eq!(hanging.execute(op, limit), Ok(ConsensusReply::Timeout));
    assert!(asked.elapsed() < Duration::from_secs(2), "the limit was kept: {:?}", asked.elapsed());
}
