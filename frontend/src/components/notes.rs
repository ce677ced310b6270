//! "What the lab simplifies": the model's shortcuts, said plainly, and what
//! a fencing token can and cannot protect. Static text, written as markup.

use yew::prelude::*;

const NOTES: &str = concat!(
    "<details class=\"simplifies\" id=\"simplifies\"><summary>What the lab simplifies, and what it does not hide</summary><ul>",
    "<li>One clock per party: the lab does not separate a wall clock from a monotonic clock, so a clock jump moves timers and TTLs alike.</li>",
    "<li>A job's work is its process's time: a GC pause moves the steps still ahead by its length, and deadlines that passed during it fire at once on resume. A chunk upload takes one second after the lease check that starts it and, once begun, completes even if the run stops: a pause in that second is the pause after the check.</li>",
    "<li>The report is four objects written one by one, then a Slack post, then a row; nothing makes them one write. In locklab/2 every period rewrites the same daily report; a locklab/1 scenario gives each period its own.</li>",
    "<li>A crashed job is redelivered only where the world says so (an at-least-once job runner); the redelivered job takes no lock and writes with its first grant's token.</li>",
    "<li>A report row written inside a transaction is checked when written and applied at COMMIT.</li>",
    "<li>Background traffic is other services inserting into job_events, whose foreign-key check takes FOR KEY SHARE on the jobs row; that is why SELECT … FOR UPDATE makes it wait.</li>",
    "<li>Redis replication is a fixed lag: the replica applies each write replication_lag_ms after the primary. The log records no replication traffic, so the replica's keys shown here are reconstructed that way. A restart loses every key. The lab never sends WAIT: it is best-effort and would not make a failover keep the lock.</li>",
    "<li>The consensus store is one abstract replicated store whose revisions never go back, not a simulation of Raft.</li>",
    "<li>Latency is drawn from a fixed range per message; TCP keeps each link in order; a partition drops messages, it does not delay them. A partition from the database that outlasts TCP keepalive ends the sessions, as a lost host does.</li>",
    "<li>The load balancer carries web traffic only: the cron job fires on every instance, which is why they race for the lock.</li>",
    "<li>A fencing token only protects a resource that checks it. Storage refuses a lower token when the scenario says it checks tokens (the default); otherwise it is a plain object store, like S3, where the last PUT wins. Slack cannot check one, so a stale holder's post goes through.</li>",
    "<li>A single Redis hands out tokens with INCR: after a failover to a replica that had not yet received the last INCR, or a restart without persistence, the same token can be handed out twice. The findings say so when it happens.</li>",
    "<li>Everything runs in your browser: the engine is compiled to WebAssembly and nothing leaves the page.</li>",
    "</ul></details>",
);

#[function_component(Simplifications)]
pub fn simplifications() -> Html {
    Html::from_html_unchecked(AttrValue::Static(NOTES))
}
