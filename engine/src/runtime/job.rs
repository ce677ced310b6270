//! The job a run does once it holds the lock: look whether the report
//! exists, work `job_ms` uploading the report's chunks at equal shares of
//! it, announce the report on Slack, and write the report row last. Each
//! write goes out when the strategy lets it (most let every write go; a
//! recipe may check its lease first, by its clock or by asking Redis).

use super::run::{HeldWrite, JobProgress};
use super::{CHUNK_UPLOAD_MS, Drives, Host, InstanceTimer, PooledQuery, Purpose, Runtime, STORAGE_TIMEOUT_MS, Stage};
use crate::event::{AbortReason, PutOutcome, RunPhase, Sql, SqlError, SqlOutcome};
use crate::ids::{Party, RunId};
use crate::vocab::{Reply, Request, WriteGate};

impl Runtime {
    /// Asks whether the period's report exists: right after taking the lock
    /// (`after_acquire`), or before a waiting run tries again.
    pub(crate) fn check_report<H: Host, S: Drives<H> + ?Sized>(
        &mut self,
        host: &mut H,
        strategy: &mut S,
        run: RunId,
        after_acquire: bool,
    ) {
        let period = self.run_state(run).period;
        let sql = Sql::ReportExists { period, report: self.row_report(strategy.report_row(run), period) };
        self.send_statement(host, strategy, run, sql, PooledQuery::Exists { after_acquire });
    }

    pub(crate) fn report_checked<H: Host, S: Drives<H> + ?Sized>(
        &mut self,
        host: &mut H,
        strategy: &mut S,
        run: RunId,
        after_acquire: bool,
        outcome: Reply,
    ) {
        // Looked up once: a waiting run comes here on every try, and the
        // try again (the last arm) needs nothing but the run's state.
        let state = self.run_state_mut(run);
        if state.ended {
            return;
        }
        let exists = match outcome {
            Reply::Sql(SqlOutcome::Rows(rows)) => Some(rows > 0),
            Reply::Redis(_)
            | Reply::Sql(_)
            | Reply::Put(_)
            | Reply::Posted
            | Reply::Consensus(_)
            | Reply::Checkout(_)
            | Reply::Timeout => None,
        };
        match (after_acquire, exists) {
            (true, Some(false)) => self.start_job(host, strategy, run),
            (_, Some(true)) => {
                self.log_run(host, run, RunPhase::Skipped);
                if after_acquire {
                    strategy.release(&mut self.cx(host, run));
                } else {
                    strategy.forget(run);
                }
                self.end_run(host, run);
            }
            (true, None) => {
                // The database did not answer: careful code does not run the job blind.
                strategy.release(&mut self.cx(host, run));
                self.drop_belief(host, run);
                let retry = host.world().retry_ms;
                self.busy(host, run, retry);
            }
            (false, _) => {
                state.stage = Stage::Trying;
                strategy.acquire(&mut self.cx(host, run));
            }
        }
    }

    fn start_job<H: Host, S: Drives<H> + ?Sized>(&mut self, host: &mut H, strategy: &mut S, run: RunId) {
        let state = self.run_state_mut(run);
        state.stage = Stage::Working;
        state.started = true;
        let redelivered = state.redelivered;
        self.log_run(host, run, RunPhase::Started);
        if !redelivered {
            strategy.job_started(&mut self.cx(host, run));
        }
        let start_local_ms = host.local_ms();
        let state = self.run_state_mut(run);
        assert!(state.job.work_timer.is_none(), "{run} started its job twice");
        state.job = JobProgress { start_local_ms, paused_ms: 0, next_step: 0, work_timer: None };
        self.schedule_work(host, run);
    }

    /// Sets the timer for the job's next step: a chunk, or (after the last) the job's end.
    pub(crate) fn schedule_work<H: Host>(&mut self, host: &mut H, run: RunId) {
        let (chunks, job_ms) = (host.world().report_chunks, host.world().job_ms);
        let job = &mut self.run_state_mut(run).job;
        // Step k of `chunks + 1` is due k + 1 equal shares into the job's work.
        let step_ms = job_ms * (u64::from(job.next_step) + 1) / (u64::from(chunks) + 1);
        let due_local_ms =
            job.start_local_ms.saturating_add(i64::try_from(step_ms + job.paused_ms).unwrap_or(i64::MAX / 4));
        job.work_timer = Some(host.set_timer_at(due_local_ms, InstanceTimer::Work { run }));
    }

    /// The job's step came due: upload a chunk, or end the work, then set the next step.
    pub(crate) fn work_step<H: Host, S: Drives<H> + ?Sized>(&mut self, host: &mut H, strategy: &mut S, run: RunId) {
        let chunks = host.world().report_chunks;
        let state = self.run_state_mut(run);
        state.job.work_timer = None;
        if state.stage != Stage::Working {
            return;
        }
        let step = state.job.next_step;
        state.job.next_step += 1;
        if step >= chunks {
            self.end_job(host, strategy, run);
            return;
        }
        // A chunk the gate lets go leaves the job working (sending it reports
        // nothing), so only a held or refused one makes the run looked at again.
        if self.gate(host, strategy, run, HeldWrite::Chunk(step)) {
            self.send_chunk(host, strategy, run, step);
        } else if self.run_state(run).stage != Stage::Working {
            return;
        }
        self.schedule_work(host, run);
    }

    /// Whether `write` goes out now, by the strategy's gate (see
    /// `Strategy::may_write`). A strategy that never checks its writes holds
    /// none, so its writes go at once: this check is inlined into each write,
    /// and the gate proper, with its look at the run, stays out of line.
    #[inline(always)]
    fn gate<H: Host, S: Drives<H> + ?Sized>(
        &mut self,
        host: &mut H,
        strategy: &mut S,
        run: RunId,
        write: HeldWrite,
    ) -> bool {
        !strategy.checks_writes() || self.checked_gate(host, strategy, run, write)
    }

    /// The gate of a strategy that checks its writes. A write behind a held
    /// one waits its turn; one the strategy checks first is held until it
    /// reports the check cleared ([`Runtime::write_cleared`]); a loss it
    /// reports is handled at once, so the run has ended when this says no for it.
    fn checked_gate<H: Host, S: Drives<H> + ?Sized>(
        &mut self,
        host: &mut H,
        strategy: &mut S,
        run: RunId,
        write: HeldWrite,
    ) -> bool {
        let gate = if self.run_state(run).held_writes.is_empty() {
            self.ask_gate(host, strategy, run)
        } else {
            WriteGate::WhenCleared
        };
        match gate {
            WriteGate::Now => true,
            WriteGate::WhenCleared => {
                self.hold(run, write);
                false
            }
            WriteGate::Never => false,
        }
    }

    /// Asks the strategy about the run's next write; a loss it reports is
    /// handled at once.
    fn ask_gate<H: Host, S: Drives<H> + ?Sized>(&mut self, host: &mut H, strategy: &mut S, run: RunId) -> WriteGate {
        let gate = strategy.may_write(&mut self.cx(host, run));
        if gate == WriteGate::Never {
            self.handle_notices(host, strategy);
        }
        gate
    }

    /// Holds `write` for a check; a held chunk counts as in flight, so the
    /// job does not end before it is written.
    fn hold(&mut self, run: RunId, write: HeldWrite) {
        let state = self.run_state_mut(run);
        state.held_writes.push_back(write);
        if matches!(write, HeldWrite::Chunk(_)) {
            state.chunks_in_flight += 1;
        }
    }

    /// The strategy's check before the first held write found the lock the
    /// run's own: that write goes out, and so does each after it that the
    /// strategy lets go at once; the next it checks waits for its own answer.
    pub(crate) fn write_cleared<H: Host, S: Drives<H> + ?Sized>(&mut self, host: &mut H, strategy: &mut S, run: RunId) {
        loop {
            if self.ended(run) {
                return;
            }
            let Some(write) = self.run_state_mut(run).held_writes.pop_front() else { return };
            match write {
                HeldWrite::Chunk(chunk) => {
                    let state = self.run_state_mut(run);
                    state.chunks_in_flight = state.chunks_in_flight.saturating_sub(1);
                    self.send_chunk(host, strategy, run, chunk);
                }
                HeldWrite::Post => self.send_post(host, run),
                HeldWrite::Row => self.send_row(host, strategy, run),
            }
            if self.run_state(run).held_writes.is_empty() || self.ask_gate(host, strategy, run) != WriteGate::Now {
                return;
            }
        }
    }

    /// Uploads chunk `chunk` of the run's report. (Not forced inline, nor
    /// are `await_reply`, `send_upload` and `route`: forcing it cut a short
    /// run's instructions by about 1% but grew the hot code past the
    /// instruction cache, 1.04 M misses against 0.77 M per `speed 30`, and
    /// cost 2.5% more CPU time; docs/bench.md.)
    fn send_chunk<H: Host, S: Drives<H> + ?Sized>(&mut self, host: &mut H, strategy: &S, run: RunId, chunk: u8) {
        let state = self.run_state_mut(run);
        state.chunks_in_flight += 1;
        let (period, token) = (state.period, Self::write_token(strategy, run, state));
        let body = Request::Put {
            period,
            report: self.reports.report_of(period),
            chunk,
            own_object: strategy.own_objects(),
            token,
        };
        self.send_upload(host, run, body, STORAGE_TIMEOUT_MS, CHUNK_UPLOAD_MS);
    }

    /// A chunk's PUT was answered (or timed out). The job awaits every upload:
    /// a refused or unanswered one fails the run, and the job only ends once all are stored.
    pub(crate) fn chunk_answered<H: Host, S: Drives<H> + ?Sized>(
        &mut self,
        host: &mut H,
        strategy: &mut S,
        run: RunId,
        body: Reply,
    ) {
        let state = self.run_state_mut(run);
        state.chunks_in_flight = state.chunks_in_flight.saturating_sub(1);
        if state.ended {
            return;
        }
        match body {
            Reply::Put(PutOutcome::Accepted) => {
                let state = self.run_state(run);
                if state.stage == Stage::Finishing && state.chunks_in_flight == 0 {
                    self.post_report(host, strategy, run);
                }
            }
            Reply::Put(PutOutcome::Rejected(_)) => self.abort(host, strategy, run, AbortReason::WriteRejected),
            Reply::Redis(_)
            | Reply::Sql(_)
            | Reply::Posted
            | Reply::Consensus(_)
            | Reply::Checkout(_)
            | Reply::Timeout => self.abort(host, strategy, run, AbortReason::WriteFailed),
        }
    }

    fn end_job<H: Host, S: Drives<H> + ?Sized>(&mut self, host: &mut H, strategy: &mut S, run: RunId) {
        let state = self.run_state_mut(run);
        if state.stage != Stage::Working {
            return;
        }
        state.stage = Stage::Finishing;
        if state.chunks_in_flight == 0 {
            self.post_report(host, strategy, run);
        }
    }

    /// Every chunk is stored: announce the report on Slack (the row comes last).
    fn post_report<H: Host, S: Drives<H> + ?Sized>(&mut self, host: &mut H, strategy: &mut S, run: RunId) {
        if self.gate(host, strategy, run, HeldWrite::Post) {
            self.send_post(host, run);
        }
    }

    fn send_post<H: Host>(&mut self, host: &mut H, run: RunId) {
        let period = self.run_state(run).period;
        let body = Request::Post { period };
        self.send_request(host, run, Party::Slack, body, Purpose::Post, Some(STORAGE_TIMEOUT_MS));
    }

    pub(crate) fn write_row<H: Host, S: Drives<H> + ?Sized>(&mut self, host: &mut H, strategy: &mut S, run: RunId) {
        if !self.run_state(run).ended && self.gate(host, strategy, run, HeldWrite::Row) {
            self.send_row(host, strategy, run);
        }
    }

    fn send_row<H: Host, S: Drives<H> + ?Sized>(&mut self, host: &mut H, strategy: &mut S, run: RunId) {
        let state = self.run_state(run);
        let (period, token, how) = (state.period, Self::write_token(strategy, run, state), strategy.report_row(run));
        let sql = Sql::WriteReport { period, report: self.row_report(how, period), run, token, how };
        self.send_statement(host, strategy, run, sql, PooledQuery::Row);
    }

    pub(crate) fn row_written<H: Host, S: Drives<H> + ?Sized>(
        &mut self,
        host: &mut H,
        strategy: &mut S,
        run: RunId,
        outcome: Reply,
    ) {
        if self.ended(run) {
            return;
        }
        match outcome {
            Reply::Sql(SqlOutcome::Rows(_)) => {
                if strategy.session(run).is_some() {
                    // Sending COMMIT is where the client stops relying on the lock.
                    self.drop_belief(host, run);
                    strategy.commit_report(&mut self.cx(host, run));
                } else {
                    self.finish(host, strategy, run);
                }
            }
            Reply::Sql(SqlOutcome::StaleToken { .. }) => self.abort(host, strategy, run, AbortReason::WriteRejected),
            Reply::Sql(SqlOutcome::Error(SqlError::ConnectionClosed | SqlError::IdleInTransactionTimeout)) => {
                self.abort(host, strategy, run, AbortReason::SessionLost);
            }
            Reply::Redis(_)
            | Reply::Sql(_)
            | Reply::Put(_)
            | Reply::Posted
            | Reply::Consensus(_)
            | Reply::Checkout(_)
            | Reply::Timeout => self.abort(host, strategy, run, AbortReason::RowWriteFailed),
        }
    }
}
