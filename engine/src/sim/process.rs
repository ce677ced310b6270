//! The instances' processes as the simulator plays them: each runs the
//! shared instance runtime ([`crate::runtime`]) on a [`SimHost`], which turns
//! its timers, requests and events into the simulated world's. What happens
//! to a process from outside it (an OOM kill, a lost host, a GC pause, a
//! restart) is the simulator's, and lives here.

use super::{Action, Payload, Sim, SimStrategy, TimerPurpose};
use crate::event::{EventKind, ProcessState};
use crate::ids::{InstanceId, Party, RunId, SessionId};
use crate::runtime::{Host, InstanceTimer, Runtime};
use crate::scenario::World;
use crate::vocab::{Request, TimerId};

/// An instance's process, as the world sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Process {
    Running,
    /// Stopped by a GC pause since `since_ms`, until `until_ms` (true times).
    Paused {
        since_ms: u64,
        until_ms: u64,
    },
    Dead,
    HostLost,
}

/// What the world keeps of an instance beside its runtime.
#[derive(Clone, Debug)]
pub(crate) struct Instance {
    pub(crate) process: Process,
    /// What came due while the process was paused, in the order it came due.
    pub(crate) deferred: Vec<Action>,
    /// A restart is queued for the dead process.
    pub(crate) restart_queued: bool,
}

impl Instance {
    pub(crate) fn new() -> Instance {
        Instance { process: Process::Running, deferred: Vec::new(), restart_queued: false }
    }
    pub(crate) fn is_paused(&self) -> bool {
        matches!(self.process, Process::Paused { .. })
    }
    pub(crate) fn is_alive(&self) -> bool {
        matches!(self.process, Process::Running | Process::Paused { .. })
    }
    pub(crate) fn defer(&mut self, action: Action) {
        self.deferred.push(action);
    }
}

/// A run as the world's servers see it: whose it is, and whether the lock
/// service counts it as the holder.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RunRecord {
    pub(crate) instance: InstanceId,
    pub(crate) granted: bool,
}

/// The simulated world as one instance's runtime sees it.
pub(crate) struct SimHost<'s> {
    sim: &'s mut Sim,
    instance: InstanceId,
}

impl std::fmt::Debug for SimHost<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SimHost").field("instance", &self.instance).finish()
    }
}

impl Host for SimHost<'_> {
    #[inline]
    fn world(&self) -> &World {
        &self.sim.world
    }
    #[inline]
    fn true_ms(&self) -> u64 {
        self.sim.now_ms
    }
    #[inline]
    fn local_ms(&self) -> i64 {
        self.sim.local_now(Party::Instance(self.instance))
    }
    #[inline]
    fn record(&mut self, kind: EventKind) {
        self.sim.record(kind);
    }
    /// Inlined natively, for the reason [`Host::set_timer`] is.
    #[cfg_attr(not(target_arch = "wasm32"), inline(always))]
    fn set_timer_at(&mut self, deadline_local_ms: i64, timer: InstanceTimer) -> TimerId {
        let purpose = TimerPurpose::Instance { instance: self.instance, timer };
        self.sim.set_timer_at(Party::Instance(self.instance), deadline_local_ms, purpose)
    }
    #[inline]
    fn cancel_timer(&mut self, id: TimerId) {
        self.sim.cancel_timer(id);
    }
    #[inline]
    fn timer_is_set(&self, id: TimerId) -> bool {
        self.sim.timer_deadline(id).is_some()
    }
    #[inline]
    fn next_run_id(&mut self) -> RunId {
        self.sim.new_run_record(self.instance)
    }
    #[inline]
    fn next_request_id(&mut self) -> u32 {
        let request = self.sim.next_request;
        self.sim.next_request += 1;
        request
    }
    #[inline]
    fn transmit(&mut self, request: u32, run: RunId, to: Party, body: Request, _timeout_ms: Option<u64>) {
        self.sim.send_message(Party::Instance(self.instance), to, Payload::Request { request, run, body });
    }
    #[inline]
    fn redis_primary(&self) -> Party {
        self.sim.redis.primary()
    }
    /// The simulated server already ended a session whose statement failed.
    #[inline]
    fn drop_session(&mut self, _session: SessionId) {}
}

impl Sim {
    /// Calls instance `instance`'s runtime with the world as its host. The
    /// runtime is out of the world for the call: nothing the runtime does
    /// reaches another instance's runtime before the call returns (messages
    /// and timers are queued, never delivered at once). It is taken out as
    /// one pointer, as the runtimes are boxed: taking the whole vector of
    /// runtimes out and putting it back was three words moved each way, and
    /// there is a call per reply and timer of an instance.
    pub(crate) fn with_runtime<R>(
        &mut self,
        instance: InstanceId,
        act: impl FnOnce(&mut Runtime, &mut SimHost<'_>) -> R,
    ) -> R {
        let mut runtime = self.runtimes[instance.index()]
            .take()
            .unwrap_or_else(|| panic!("{instance}'s runtime was called from inside its own runtime"));
        let result = act(&mut runtime, &mut SimHost { sim: self, instance });
        self.runtimes[instance.index()] = Some(runtime);
        result
    }

    /// Instance `instance`'s runtime, while none is being called.
    pub(crate) fn runtime(&self, instance: InstanceId) -> &Runtime {
        self.runtimes[instance.index()].as_deref().unwrap_or_else(|| panic!("{instance}'s runtime is being called"))
    }

    /// A new run of `instance`, as the servers know it: ids are dense, from 0.
    pub(crate) fn new_run_record(&mut self, instance: InstanceId) -> RunId {
        let run = RunId(u32::try_from(self.runs.len()).unwrap_or(u32::MAX));
        self.runs.push(RunRecord { instance, granted: false });
        run
    }

    /// Fires a runtime's timer.
    pub(crate) fn instance_timer(&mut self, instance: InstanceId, timer: InstanceTimer, strategy: &mut SimStrategy) {
        self.with_runtime(instance, |runtime, host| runtime.on_timer(host, strategy, timer));
    }

    /// Hands a runtime the reply to its request.
    pub(crate) fn instance_reply(
        &mut self,
        instance: InstanceId,
        request: u32,
        body: crate::vocab::Reply,
        strategy: &mut SimStrategy,
    ) {
        self.with_runtime(instance, |runtime, host| runtime.on_reply(host, strategy, request, body));
    }

    // ----- crashes, pauses and restarts -----

    pub(crate) fn kill(&mut self, instance: InstanceId, host_lost: bool, strategy: &mut SimStrategy) {
        if !self.instances[instance.index()].is_alive() {
            return;
        }
        let sessions = self.with_runtime(instance, |runtime, host| runtime.die(host, strategy));
        let state = &mut self.instances[instance.index()];
        state.process = if host_lost { Process::HostLost } else { Process::Dead };
        state.deferred.clear();
        self.cancel_party_timers(Party::Instance(instance));
        let state = if host_lost { ProcessState::HostLost } else { ProcessState::Dead };
        self.record(EventKind::Process { instance, state });
        self.with_runtime(instance, |runtime, host| runtime.log_pool(host));
        for session in sessions {
            if host_lost {
                // No FIN: the server learns only when TCP keepalive gives up.
                let at = self.now_ms + self.world.tcp_keepalive_ms;
                self.schedule(at, Action::KeepaliveExpiry { session });
            } else {
                self.send_fin(instance, session);
            }
        }
    }

    pub(crate) fn restart(&mut self, instance: InstanceId, strategy: &mut SimStrategy) {
        let state = &mut self.instances[instance.index()];
        if state.is_alive() {
            return;
        }
        state.process = Process::Running;
        state.restart_queued = false;
        self.record(EventKind::Process { instance, state: ProcessState::Restarted });
        self.with_runtime(instance, |runtime, host| runtime.restart(host, strategy));
    }

    pub(crate) fn pause(&mut self, instance: InstanceId, duration_ms: u64) {
        let generation = self.runtime(instance).generation();
        let state = &mut self.instances[instance.index()];
        if !state.is_alive() {
            return;
        }
        let (since, until) = match state.process {
            Process::Paused { since_ms, until_ms } => (since_ms, until_ms.max(self.now_ms + duration_ms)),
            Process::Running | Process::Dead | Process::HostLost => (self.now_ms, self.now_ms + duration_ms),
        };
        state.process = Process::Paused { since_ms: since, until_ms: until };
        self.record(EventKind::Process { instance, state: ProcessState::Paused { until_ms: until } });
        self.schedule(until, Action::Resume { instance, generation });
    }

    pub(crate) fn resume(&mut self, instance: InstanceId, generation: u32) {
        let current = self.runtime(instance).generation();
        let state = &mut self.instances[instance.index()];
        let Process::Paused { since_ms, until_ms } = state.process else {
            return;
        };
        if current != generation || until_ms > self.now_ms {
            return; // a longer pause took over, or the process died meanwhile
        }
        state.process = Process::Running;
        let deferred = std::mem::take(&mut state.deferred);
        self.record(EventKind::Process { instance, state: ProcessState::Running });
        // Work resumes where it stopped; its steps come before the overdue deadlines.
        let paused_ms = self.now_ms - since_ms;
        self.with_runtime(instance, |runtime, host| runtime.resume_work(host, paused_ms));
        // Everything that came due during the pause happens now, in the order it came due.
        for action in deferred {
            self.schedule(self.now_ms, action);
        }
    }

    /// The kernel closes a dead process's DB sockets: a FIN per session.
    pub(crate) fn send_fin(&mut self, instance: InstanceId, session: SessionId) {
        self.send_message(Party::Instance(instance), Party::Db, Payload::Fin { session });
    }

    /// Whether nothing of `instance`'s job is in flight: its runtime is
    /// idle, and no job waits for a queued restart to be handed out again.
    pub(crate) fn instance_idle(&self, instance: InstanceId) -> bool {
        let runtime = self.runtime(instance);
        runtime.idle() && !(self.instances[instance.index()].restart_queued && runtime.has_redeliveries())
    }
}
