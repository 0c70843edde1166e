"""sapcontrol.rules.yml: the per-step series the whitepaper alerts read, from the sapcontrol
source (sapstartsrv's SAPControl web service) instead of the model's ST03 counters."""

from __future__ import annotations

from collections.abc import Mapping

from alerts.recording import FAST, SAPCONTROL_SOURCE, STEPS
from alerts.rules import INSTANCE, RuleFile, alert, number, record
from alerts.settings import MonitoringConfig
from alerts.workload import DB_EXPLAINS, explained_by, mean_ms, page_alert
from exporters.vocabulary import (
    DIALOG_RESPONSE_MEAN,
    INDICATOR_BY_COMPONENT,
    INDICATORS,
    Indicator,
    per_step_mean,
)

BY = "sum by (sid, sap_instance)"
CCMS_STEPS = "sap_ccms_dialog_steps_per_second"
DIA_WRITES = 'sap_dispatcher_queue_writes_total{queue="ABAP/DIA"}'
# Dialog steps per second per instance: CCMS DialogSteps, or where a system's alert tree
# has no such node (none for 10 minutes), the rate of ABAP/DIA dispatcher queue writes
# (one per dialog step).
STEP_RATE = "sap_instance:sap_dialog_steps_per_second:ccms_or_dia_writes"
# Series of one instance's dialog work, labelled like the model's so the same alerts read them.
DIALOG = {"task_type": "dialog", "source": SAPCONTROL_SOURCE}
# Components CCMS reports as per-step averages over its own interval: component -> CCMS value.
CCMS_AVERAGES = {
    "dispatcher_wait": "queue_time",
    "db_request": "db_request_time",
    "load_gen": "load_gen_time",
    "response": "response_time",
}
# The model's (or any ST03 reader's) exact per-step counters. Where an instance has them, the
# sapcontrol source records no per-step series of its own: one fault, one alert, from the
# exact counters rather than CCMS's interval averages (a second, approximate copy would page
# twice and fire on its own transients).
# Their recorded step rate, not the raw counter: a range over 5 minutes, so one failed
# scrape (whose staleness markers empty the raw counter for an evaluation) lets no CCMS copy
# through. The sapcontrol step rate below shares its name, hence source!="sapcontrol".
ST03_COUNTERS = f'{STEPS}{{source!="sapcontrol"}}'
# Components read by Little's law from the SM50 work-process table: component -> activity.
WP_ACTIVITIES = {"enqueue": "enqueue", "roll_in": "roll_in", "roll_out": "roll_out"}
# The indicators with a page level: this source records their 1-minute means too, and
# pages on them (page_of) only while the 5-minute mean is over the paper's threshold
# as well, for CONFIRM. A CCMS value is a trailing average over CCMS's own interval and an
# SM50 sample a handful of work processes: a minute of either carries brief bursts and the
# secondary symptoms of another fault's onset (a DB bottleneck's first minute queues dialog
# steps in the dispatcher), which the exact counters' twins (for: 30s) would page on.
FAST_INDICATORS = tuple(i for i in INDICATORS if i.page_key is not None)
FAST_COMPONENTS = {i.component for i in FAST_INDICATORS}
# At the page levels (below the old 4x twins) the onset of another fault lifts a gauge's
# 1-minute mean over a page level for up to 75 s (a DB bottleneck's first dispatcher wait,
# a roll fault's first DB requests: tests/sapcontrol/rules/sapcontrol_fast.test.yml):
# for: 2m lets those pass; a sustained breach waits 90 s more than on exact counters.
CONFIRM = "2m"


# The enqueue server is one per system: its page reads the SID's Little's-law estimate (work
# processes on hold for ENQ on all instances over all their dialog steps/s), not one
# instance's. An instance holds about 0.1-0.2 work processes on ENQ (16 steps/s x 6-13 ms):
# an SM50 table shows 0 or 1, so a 1-minute window of four to six samples reads 0 or 25 ms+
# and never holds over the page level for 2 minutes; 30 instances together hold 3-6.
def pooled_mean(component: str, window: str) -> str:
    return f"sid_task_type:sap_workload_{component}_seconds_per_step:mean{window}"


POOLED = ("enqueue",)

WHY = """
Per-step series from the sapcontrol source (sapstartsrv's SAPControl web service), under
the names workload.rules.yml and the NOC dashboard read, labelled source="sapcontrol" so
a system read both ways keeps two distinguishable series. docs/sapcontrol.md derives them.

- Dispatcher wait, DB request, load+gen and response time: CCMS R3Services/Dialog
  QueueTime, DBRequestTime, Load+GenTime and ResponseTime. CCMS reports each as an
  average over its own last interval, not as a counter, so the 5-minute value is the
  average of those averages weighted by the interval's dialog steps (CCMS DialogSteps):
  avg_over_time(value * steps) / avg_over_time(steps).
- Enqueue, roll-in and roll-out time: CCMS has no per-step figure for them. By Little's
  law, work processes found on hold for ENQ (or rolling in, rolling out) in the SM50
  table, averaged over 5 minutes, divided by the dialog steps per second (CCMS
  DialogSteps, in the system's own time: the model may run faster than the wall clock),
  is the time a step spends there.
- Where a system's CCMS tree has no Dialog/DialogSteps node, the step rate (weights and
  divisor above) falls back to the rate of ABAP/DIA dispatcher queue writes, one per
  dialog step, in wall-clock time.
- Dialog steps per second for the NOC: the rate of requests written into the ABAP/DIA
  dispatcher queue (GetQueueStatistic Writes, a real counter, so rate() absorbs resets).
- The components with a page level are also recorded over 1 minute (mean1m). This
  source's pages (below; workload.rules.yml's read only exact counters) fire when the
  1-minute mean is over the page level and the 5-minute mean over the paper's threshold,
  for 2 minutes: CCMS interval averages and SM50 samples carry brief bursts and the
  secondary symptoms of another fault's onset, which neither survive. They are the same
  alerts as the exact counters' (one severity, the cause label, keep_firing_for), so a
  system read either way sends the same messages (docs/alerts.md states the latency).
- Only for instances without ST03 counters (sap_workload_steps_total, read through their
  recorded 5-minute step rate so a failed scrape does not let a copy through): where those exist
  (the model, or an ST03 reader beside sapstartsrv) they are exact and their series are the
  ones alerts read; a second copy from CCMS averages would page twice for one fault.
Idle-safe as recording.rules.yml: no series below min_steps_per_second dialog steps per second.
"""


HEALTH_WHY = """
Instance health from sapstartsrv: `sap_up{source="sapcontrol"}` says only that sapstartsrv
answered; whether the instance's processes run is GetProcessList's dispstatus per process
(`sap_process_status`, 1 gray/stopped, 2 green, 3 yellow, 4 red) and GetSystemInstanceList's
per instance (`sap_instance_status`). A dispatcher that is down while sapstartsrv runs
(faults such as "DpAttachStartService failed") therefore reads sap_up 1 and disp+work gray.
"""
HEALTH_BY = "max by (sid, sap_instance)"
PROCESS_MAX = "sap_instance:sap_process_status:max"
LISTED_MAX = "sap_instance:sap_instance_status:max"
# An instance that ran within this window and now reads gray was stopped (not a spare
# that is kept stopped, such as a standby ERS): SAPInstanceStopped.
WAS_RUNNING = "6h"
STATE = "{{ if eq $value 1.0 }}GRAY (stopped){{ else }}RED (failed){{ end }}"


def health_rules() -> list[dict]:
    """Recording rules and alerts on whether sapstartsrv answers and the processes run.

    Telegraf re-exposes the exporter's series under its own job: `max by` keeps one series
    per instance (and process) whoever scraped it."""
    proc = "max by (sid, sap_instance, process) (sap_process_status)"
    return [
        # 1 when every process of the instance is gray: the instance is stopped.
        record(PROCESS_MAX, f"{HEALTH_BY} (sap_process_status)"),
        record(LISTED_MAX, f"{HEALTH_BY} (sap_instance_status)"),
        alert(
            "SAPStartSrvUnreachable",
            f'{HEALTH_BY} (sap_up{{source="sapcontrol"}}) == 0',
            for_="1m",
            severity="critical",
            summary="sapstartsrv of an SAP instance does not answer.",
            description=f"sapstartsrv of {INSTANCE} has not answered the exporter's SAPControl "
            "calls for a minute: nothing is known about the instance's processes.",
            diagnosis="The host is down, sapstartsrv (the start service) is not running, or the "
            "network or a firewall blocks port 5<NN>13/5<NN>14. The instance itself may still "
            "serve users: check it from SAP GUI or another instance's GetSystemInstanceList.",
        ),
        alert(
            "SAPInstanceStopped",
            f"({PROCESS_MAX} == 1 or {LISTED_MAX} == 1)\n"
            f"and on(sid, sap_instance)\n"
            f"(max_over_time({PROCESS_MAX}[{WAS_RUNNING}]) > 1"
            f" or max_over_time({LISTED_MAX}[{WAS_RUNNING}]) > 1)\n",
            for_="1m",
            severity="critical",
            summary="An SAP instance that was running is stopped.",
            description=f"Every process of {INSTANCE} reads GRAY (stopped) in sapstartsrv, "
            f"after running in the last {WAS_RUNNING}; its users and work processes are gone.",
            diagnosis="Someone stopped the instance (sapcontrol Stop, SAP MMC, a shutdown), or it "
            "ended on its own: the instance's dev_disp, dev_w* and sapstart.log say which.",
        ),
        alert(
            "SAPProcessNotRunning",
            f"({proc} == 1 or {proc} == 4)\nunless on(sid, sap_instance) ({PROCESS_MAX} == 1)\n",
            for_="1m",
            severity="critical",
            summary="A process of an SAP instance that should run does not.",
            description=f"{{{{ $labels.process }}}} of {INSTANCE} is {STATE} in sapstartsrv's "
            "process list while sapstartsrv answers.",
            diagnosis="sapstartsrv lists the processes the start profile starts, so each should "
            "run. disp+work down means no work process serves users (SOAP faults such as "
            '"DpAttachStartService failed" on the ABAP methods); gwrd, icman, enserver or '
            "msg_server down cut RFC, HTTP, locks or logon balancing. The process's dev_* trace "
            "says why it ended.",
        ),
        alert(
            "SAPProcessDegraded",
            f"{proc} == 3",
            for_="5m",
            severity="warning",
            summary="A process of an SAP instance has reported a warning (YELLOW) for 5 minutes.",
            description=f"{{{{ $labels.process }}}} of {INSTANCE} has been YELLOW in "
            "sapstartsrv's process list for 5 minutes.",
            diagnosis="The process runs with a problem its status text names (the dispatcher: a "
            "dialog queue that does not drain, a lost message server connection). Read "
            "textstatus with sapcontrol GetProcessList.",
        ),
    ]


MONITORING_WHY = """
The source's own health (exporters/sources/sapcontrol_guard.py): a refused monitoring user
(`sap_sapcontrol_auth_refused`, its protected methods held back to one login attempt per
AUTH_BACKOFF_S), a method that fails other than by 401 (`sap_sapcontrol_method_failing`,
kept at 1 while it is backed off), discovery that does not answer, and failovers discovery
saw. None of them says the SAP instance is down: sap_up and the process lights say that.
"""
# Telegraf re-exposes the exporter's series: `max by` gives one alert per instance/method.
METHOD_BY = "max by (sid, sap_instance, method)"


def monitoring_rules() -> list[dict]:
    """Alerts on the source itself: what it cannot read, and why."""
    return [
        alert(
            "SAPControlUserRefused",
            f"{HEALTH_BY} (sap_sapcontrol_auth_refused) == 1",
            for_="1m",
            severity="warning",
            summary="sapstartsrv refuses the monitoring user (HTTP 401).",
            description=f"sapstartsrv of {INSTANCE} answers its protected methods with HTTP "
            "401: the work-process table, queues, CCMS values and lock statistics are not "
            "read. wlmon retries once per WLMON_SAPCONTROL_AUTH_BACKOFF_S, not per scrape.",
            diagnosis="The password expired or changed, the OS user is locked (pam_faillock, "
            "AD lockout) or lost its sapstartsrv permission (Unix: write on the instance's "
            "sapstartsrv socket group; Windows: execute). Check with `sapcontrol -nr <NN> "
            "-user <user> - -function ABAPGetWPTable` on the host.",
        ),
        alert(
            "SAPControlMethodFailing",
            f"{METHOD_BY} (sap_sapcontrol_method_failing) == 1\n"
            # A hung sapstartsrv times every method out: SAPStartSrvUnreachable's page.
            f'unless on(sid, sap_instance) {HEALTH_BY} (sap_up{{source="sapcontrol"}}) == 0\n',
            for_="5m",
            severity="warning",
            summary="A SAPControl web method keeps failing on an instance.",
            description=f"{{{{ $labels.method }}}} on {INSTANCE} has failed for 5 minutes "
            "(SOAP fault, HTTP 5xx, a truncated or malformed answer, or no answer in time); "
            "what it reads is missing while sapstartsrv answers the rest.",
            diagnosis="sap_sapcontrol_calls_total{outcome} says how it fails; the exporter's "
            "log names the fault. A timeout is a slow dispatcher or sapstartsrv (raise "
            "WLMON_SAPCONTROL_TIMEOUT_S only if the answer is merely late); HTTP 5xx without "
            "a fault is sapstartsrv failing inside (its sapstartsrv.log; restart it with "
            "`sapcontrol -nr <NN> -function RestartService`).",
        ),
        alert(
            "SAPControlDiscoveryFailing",
            "max by (sid) (sap_sapcontrol_discovery_success) == 0",
            for_="5m",
            severity="warning",
            summary="No discovery instance answers GetSystemInstanceList.",
            description="For 5 minutes none of WLMON_SAPCONTROL_DISCOVER has listed the "
            "instances of {{ $labels.sid }}: instances added, removed or moved (an HA "
            "failover) are not followed; the last list found stays in use.",
            diagnosis="The discovery instances are down or unreachable, or their list names "
            "nothing readable (ports, HOSTS). Name more than one instance in DISCOVER, "
            "ideally on different hosts.",
        ),
        alert(
            "SAPInstanceFailedOver",
            "max by (sid, instance_name) (increase(sap_sapcontrol_failovers_total[15m])) > 0",
            for_="0s",
            severity="warning",
            summary="An SAP instance moved to another host (HA failover).",
            description="{{ $labels.instance_name }} of {{ $labels.sid }} is listed on another "
            "host than before (GetSystemInstanceList) in the last 15 minutes; wlmon reads it "
            "there now.",
            diagnosis="The cluster moved the instance (a node failure, a planned switch). "
            "Check the node it left, the cluster's log (crm_mon, the HA provider), and the "
            "enqueue replication state (sap_enqueue_replication_state) while the ERS "
            "catches up.",
        ),
    ]


NOC_WHY = """
What a NOC pages on besides response times (issue 31): ABAP short dumps, update errors and
an update hang, aborted background jobs and spool errors. The CCMS nodes (GetAlertTree,
RZ20's "Entire System" monitor, exporters/collectors/sapcontrol.py NOC_NODES) carry SAP's
own colour from their monitoring templates; the short-dump rate pages at the NOC's level in
thresholds.yml (short_dumps_per_minute), the others when CCMS colours them red. An update
hang has no CCMS node of its own: the dispatcher's ABAP/UPD queue holds requests that no
update work process takes (GetQueueStatistic Now > 0, Reads standing still). The system log
(ABAPReadSyslog, SM21) pages on its red entries a minute, ABAP runtime errors (AB0) aside:
those page once, as short dumps.
"""
# Long enough that a V1 update taking its time (a few seconds) or a quiet night with one
# request queued is not a hang: no update work process took any request for 3 minutes.
UPDATE_HANG_WINDOW = "3m"
# A rolling kernel update restarts instances one after the other within minutes; mixed
# patches past this long are an update left half done.
KERNEL_DRIFT_FOR = "15m"


def noc_rules(config: MonitoringConfig) -> list[dict]:
    """One critical alert per condition a NOC acts on, from the CCMS tree and the queues."""
    per_min = number(config.thresholds.short_dumps_per_minute)
    syslog = number(config.thresholds.syslog_errors_per_minute)
    held = number(config.thresholds.lock_held_seconds)
    long_step = number(config.thresholds.long_running_dialog_step_seconds)
    java_busy = number(config.thresholds.java_thread_pool_busy_ratio)
    state = 'max by (sid, sap_instance) (sap_ccms_node_state{{node="{name}"}})'
    return [
        alert(
            "SAPShortDumpStorm",
            f"{HEALTH_BY} (sap_ccms_shortdumps_per_second) * 60 > {per_min}",
            for_="2m",
            severity="critical",
            summary="An SAP instance writes ABAP short dumps at a storm's rate.",
            description=f"{INSTANCE} has written "
            '{{ $value | printf "%.0f" }} ABAP short dumps a minute for 2 minutes (CCMS '
            f"R3Abap Shortdumps Frequency; the page level is {per_min} a minute): users' "
            "steps end in runtime errors instead of their screens.",
            diagnosis="ST22 lists the dumps: one runtime error and program repeating is a "
            "program brought by a transport (import history, STMS) or bad master data; "
            "many kinds at once are the system's resources (TSV_TNEW_PAGE_ALLOC_FAILED: "
            "memory; DBSQL_*: the database; SYSTEM_NO_ROLL: the roll area).",
        ),
        alert(
            "SAPUpdateErrors",
            f"{HEALTH_BY} (sap_ccms_update_errors) > 0\n"
            f"or {state.format(name='AbapErrorInUpdate')} == 4\n",
            for_="1m",
            severity="critical",
            summary="Updates end in ABAP errors on an SAP instance.",
            description=f"CCMS R3Services Update AbapErrorInUpdate on {INSTANCE} is red: V1 "
            "updates ended in an error (SM13 status ERR), so the changes users saved in "
            "those steps are not in the database.",
            diagnosis="SM13 lists the failed update records with their function module and "
            "the short dump (ST22) that ended them; repeat them with SM13 after the cause is "
            "fixed, or tell the owners which documents were lost.",
        ),
        alert(
            "SAPUpdateHang",
            f'{HEALTH_BY} (sap_dispatcher_queue_length{{queue="ABAP/UPD"}}) > 0\n'
            "and on(sid, sap_instance)\n"
            f"  {HEALTH_BY} (increase(sap_dispatcher_queue_reads_total"
            f'{{queue="ABAP/UPD"}}[{UPDATE_HANG_WINDOW}])) == 0\n',
            for_="2m",
            severity="critical",
            summary="The update service of an SAP instance takes no request.",
            description=f"{{{{ $value }}}} V1 update requests wait in the ABAP/UPD queue of "
            f"{INSTANCE} and no update work process has taken one for "
            f"{UPDATE_HANG_WINDOW} (GetQueueStatistic Reads stands still): users' changes "
            "are not written.",
            diagnosis="SM13 shows whether the update is deactivated (Administration > "
            "Activate) and the records waiting; SM50 shows the UPD work processes, usually "
            "all running one long update waiting on a database lock (DB lock waits) or all "
            "stopped or ended (their dev_w* traces).",
        ),
        alert(
            "SAPSyslogErrors",
            "max by (sid, sap_instance) (sum by (sid, sap_instance, job) (rate(\n"
            '  sap_syslog_entries_total{severity="red",message_id!="AB0"}[5m]))) * 60\n'
            f"> {syslog}\n",
            for_="2m",
            severity="critical",
            summary="The ABAP system log of an SAP instance fills with errors.",
            description=f"{INSTANCE} has written "
            '{{ $value | printf "%.1f" }} red entries a minute to its system log (SM21) over '
            f"5 minutes, runtime errors aside (the page level is {syslog} a minute).",
            diagnosis="SM21 on the instance (or the log store: "
            '{source="sapcontrol_syslog", severity="red"}) names the messages; '
            "sap_syslog_entries_total{message_id} says which allow-listed ids they are. "
            "Communication errors (R49) are a partner system or the gateway; database "
            "errors the database's own log.",
        ),
        alert(
            "SAPLockHeldLong",
            f"{HEALTH_BY} (sap_enqueue_oldest_lock_age_seconds) > {held}",
            for_="1m",
            severity="critical",
            summary="A lock in the enqueue table has been held for too long.",
            description=f"The oldest lock on {INSTANCE} has been held for "
            "{{ $value | humanizeDuration }} (EnqGetLockTable, tracked across readings; the "
            f"page level is {held} s): whoever needs that object waits or gives up.",
            diagnosis="SM12 on the system, sorted by time: the user, transaction and argument "
            "of the old lock. A user who left a document open in change mode is asked to "
            "leave it; an update (owner-vb) waiting in SM13 is that update's problem "
            "(SAPUpdateHang); delete the lock in SM12 only when its owner is gone.",
        ),
        alert(
            "SAPLongRunningDialogStep",
            f'{HEALTH_BY} (sap_work_processes_longest_running_seconds{{type="DIA"}}) > {long_step}',
            for_="1m",
            severity="critical",
            summary="A dialog work process has been on one step for too long.",
            description=f"A dialog work process on {INSTANCE} has been running its current "
            "step for {{ $value | humanizeDuration }} (ABAPGetWPTable Time, SM50; the page "
            f"level is {long_step} s): it is one work process fewer for every other user, "
            "and the step ends in a TIME_OUT dump at rdisp/max_wprun_time.",
            diagnosis="SM50 (or SM66 across the instances), sorted by Time: the user, "
            "program and table of the long runner. A report started in dialog is moved to a "
            "background job (SM36); a step waiting on a database lock is the database's "
            "(DB lock waits); cancel it in SM50 (Cancel without core) only with the user.",
        ),
        alert(
            "SAPJavaThreadPoolExhausted",
            f'sum by (sid, sap_instance) (sap_java_threads{{pool="application",state="busy"}}) '
            f'/ sum by (sid, sap_instance) (sap_java_threads{{pool="application"}}) >= {java_busy}',
            for_="2m",
            severity="critical",
            summary="An AS Java instance has no free application thread.",
            description=f"{{{{ $value | humanizePercentage }}}} of the application threads on "
            f"{INSTANCE} work on a task (J2EEGetThreadList2; the page level is {java_busy}): "
            "new HTTP requests (MII transactions, portal pages) wait for a thread or time out.",
            diagnosis="NWA > Troubleshooting > Java > Threads (or sapcontrol -function "
            "J2EEGetThreadList2): the task most threads run. One task repeating is a hung "
            "back end (a JCo call to ABAP, a database, a web service): fix that first; a "
            "steady load above the pool's size is raised in the Config Tool "
            "(ApplicationThreadManager MaxThreadCount) with the heap in mind.",
        ),
        alert(
            "SAPBackgroundJobsAborted",
            f"{state.format(name='AbortedJobs')} == 4",
            for_="1m",
            severity="critical",
            summary="Background jobs abort on an SAP instance.",
            description=f"CCMS R3Services Background AbortedJobs on {INSTANCE} is red: "
            "background jobs ended with status Canceled (SM37) over CCMS's threshold.",
            diagnosis="SM37 with status Canceled since the last run: the job log names the "
            "step and the short dump or message that ended it; dependent jobs of a chain "
            "have not started.",
        ),
        alert(
            "SAPSpoolErrors",
            f"{state.format(name='ErrorsInWpSPO')} == 4",
            for_="1m",
            severity="critical",
            summary="Spool work processes report errors on an SAP instance.",
            description=f"CCMS R3Services Spool SpoolService ErrorsInWpSPO on {INSTANCE} is "
            "red: output requests fail in the spool work processes (SP01 status Error).",
            diagnosis="SP01 lists the failed requests and their output device; SPAD's "
            "device and its host spool (lpd, the print server) are the usual cause; the "
            "spool work process's dev_w* trace names the error.",
        ),
    ]


HA_WHY = """
HA state from sapstartsrv's cluster interface (the ASCS and ERS instances; the cluster
connector, e.g. sap_suse_cluster_connector, answers): HAGetFailoverConfig says whether a
cluster runs the instance (`sap_ha_failover_active`) and on which node, HACheckConfig and
HACheckFailoverConfig count their checks by category and state (`sap_ha_checks`), and
EnqGetStatistic the enqueue replication to the ERS. Checks of category sap_state are left to
the instance and process alerts (a stopped SCS is SAPInstanceStopped), replication to its own
alert. A failover itself is SAPInstanceFailedOver (monitoring group).
"""
# An instance a cluster ran within this window and that now reads HAActive false: the
# cluster is in maintenance (or lost its connector), not a system without a cluster.
HA_WAS_ACTIVE = "6h"


VERSIONS_WHY = """
# What the instances run (GetVersionInfo, ABAPGetComponentList): a warning, not a page. One
# kernel per system is what SAP supports; an instance left on an older patch after an update
# (sapcpe, no restart) fails in ways hard to place, but nothing is down yet.
"""


def version_rules() -> list[dict]:
    """A warning per instance left on an older kernel patch than its system's newest."""
    return [
        alert(
            "SAPKernelPatchMismatch",
            # Within one release only: an instance on another release is an upgrade half
            # done, which the instances dashboard's version table shows.
            "max by (sid, sap_instance, executable, release) (sap_kernel_patch) "
            "< on (sid, executable, release) group_left "
            "max by (sid, executable, release) (sap_kernel_patch)",
            for_=KERNEL_DRIFT_FOR,
            severity="warning",
            summary="An SAP instance runs an older kernel patch than the rest of its system.",
            description="{{ $labels.executable }} on "
            f"{INSTANCE} runs kernel "
            "{{ $labels.release }} patch {{ $value }} (GetVersionInfo), older than the "
            f"newest patch of that release in the system, for {KERNEL_DRIFT_FOR}: one kernel "
            "per system is what SAP supports, and mixed patches fail in ways hard to place "
            "(RFC, enqueue, ABAP load errors).",
            diagnosis="sapcontrol -nr NN -function GetVersionInfo on the instance against "
            "another: the instance's local exe directory was not refreshed by sapcpe (full "
            "file system, sapcpe's log in the instance's work directory) or the instance was "
            "not restarted after the update (sapstartsrv itself: RestartService). Restart "
            "the instance after sapcpe copied the central kernel.",
        ),
    ]


def ha_rules() -> list[dict]:
    """One critical alert per HA condition."""
    return [
        alert(
            "SAPHACheckFailed",
            'max by (sid, sap_instance, check, category) (sap_ha_checks{state="error",'
            'category=~"ha_configuration|ha_state|sap_configuration"}) > 0\n',
            for_="5m",
            severity="critical",
            summary="An HA check of an SAP instance fails.",
            description="{{ $value }} {{ $labels.category }} check(s) of "
            '{{ if eq $labels.check "failover" }}HACheckFailoverConfig{{ else }}HACheckConfig'
            f"{{{{ end }}}} on {INSTANCE} have read ERROR for 5 minutes: a failover may not "
            "work when it is needed.",
            diagnosis="`sapcontrol -nr <NN> -function HACheckConfig` (and HACheckFailoverConfig) "
            "on the instance's host names each failing check and why; the cluster's own "
            "status (crm_mon, pcs status) shows resources in maintenance, unmanaged or "
            "failed, and constraints left by a manual move.",
        ),
        alert(
            "SAPEnqueueReplicationLost",
            "max by (sid, sap_instance) (sap_enqueue_replication_state) == 4",
            for_="1m",
            severity="critical",
            summary="The enqueue server's replication to the ERS is lost.",
            description="EnqGetStatistic replication-state on {{ $labels.sap_instance }} "
            "({{ $labels.sid }}) has been RED for a minute: the lock table is not replicated, so "
            "a failover of the ASCS now loses every lock (and the updates waiting on them).",
            diagnosis="The ERS instance is down or cannot reach the enqueue server: its "
            "sap_process_status (enq_replicator / enqr), the ERS's dev_enqrepl, and after a "
            "failover whether the ERS was restarted on the other node by the cluster.",
        ),
        alert(
            "SAPHAFailoverDisabled",
            "max by (sid, sap_instance) (sap_ha_failover_active) == 0\n"
            "and on(sid, sap_instance)\n"
            "  max by (sid, sap_instance) (max_over_time(sap_ha_failover_active"
            f"[{HA_WAS_ACTIVE}])) == 1\n",
            for_="5m",
            severity="critical",
            summary="The cluster no longer runs an SAP instance it ran.",
            description=f"HAGetFailoverConfig on {INSTANCE} says HAActive false for 5 minutes "
            f"after true in the last {HA_WAS_ACTIVE}: no failover will happen if its node fails.",
            diagnosis="The cluster is in maintenance mode or the resource unmanaged (crm "
            "configure property maintenance-mode, pcs resource unmanage), or the cluster "
            "connector broke (sapstartsrv's service/halib and halib_cluster_connector "
            "parameters, the connector's log). End the maintenance when the work is done.",
        ),
    ]


def _labelled(name: str, expr: str, labels: Mapping[str, str]) -> dict:
    return {**record(name, expr), "labels": dict(labels)}


def _weighted(value: str) -> str:
    return f"sap_instance:sap_ccms_dialog_{value}_seconds:weighted"


def _per_step(
    numerator: str, guard: str, by: str = BY, on: str = "sid, sap_instance", window: str = "5m"
) -> str:
    return (
        f"{by} (avg_over_time({numerator}[{window}]))\n"
        f"  / ({by} (avg_over_time({STEP_RATE}[{window}])) >= {guard})\n"
        f"unless on({on}) {ST03_COUNTERS}\n"
    )


def page_of(indicator: Indicator, config: MonitoringConfig) -> dict:
    """The indicator's page on this source's series: the 1-minute mean over the page
    level, confirmed by the 5-minute mean over the paper's threshold (the value printed
    stays the 1-minute mean: `and` keeps the left side)."""
    warn_ms = 1000 * config.thresholds.seconds(indicator)
    page = number(1000 * config.thresholds.page_level(indicator))
    mine = f'task_type="dialog",source="{SAPCONTROL_SOURCE}"'
    if indicator.component in POOLED:
        # Each instance of the SID pages, valued by the SID's mean (x instance^0 = 1), so
        # the message lists the instances as the exact counters' page does.
        c = indicator.component
        each = f"* on(sid) group_right() ({per_step_mean(c, '5m')}{{{mine}}} ^ 0)\n"
        expr = (
            f"(1000 * {pooled_mean(c, FAST)}{{{mine}}} > {page}\n"
            f"  and on(sid) 1000 * {pooled_mean(c, '5m')}{{{mine}}} > {number(warn_ms)})\n" + each
        )
        # Held, as the exact counters' pages (rules.py, resolve_together).
        held = f"(1000 * {pooled_mean(c, FAST)}{{{mine}}})\n  " + each
        return page_alert(indicator, config, expr, CONFIRM, held_value=held)
    mean = mean_ms(indicator, FAST, mine)
    expr = (
        f"{mean} > {page}\n"
        "and on(sid, sap_instance, task_type)\n"
        f"  {mean_ms(indicator, '5m', mine)} > {number(warn_ms)}\n"
    )
    if indicator.component == "dispatcher_wait":
        db = INDICATOR_BY_COMPONENT["db_request"].alert
        expr += explained_by(f'ALERTS{{alertname="{db}"}}', DB_EXPLAINS)
    return page_alert(indicator, config, expr, CONFIRM, held_value=mean)


def rule_file(config: MonitoringConfig) -> RuleFile:
    guard = number(config.thresholds.min_steps_per_second)
    rules = [
        _labelled(
            STEPS,
            f"{BY} (rate({DIA_WRITES}[5m]))\nunless on(sid, sap_instance) {ST03_COUNTERS}\n",
            DIALOG,
        ),
        record(
            STEP_RATE,
            # CCMS counts in the system's own time, the queue writes' rate in the wall's: a
            # scrape that misses an instance's CCMS value must not swap in the other clock
            # (10x the steps on a model at speed 10), so the last CCMS value holds for a
            # minute and the writes stand in only where CCMS said nothing for 10 minutes.
            f"{BY} (last_over_time({CCMS_STEPS}[1m]))\n  or on(sid, sap_instance)\n"
            f"  ({BY} (rate({DIA_WRITES}[5m]))\n"
            f"   unless on(sid, sap_instance) {BY} (max_over_time({CCMS_STEPS}[10m])))\n",
        ),
        *(
            record(
                _weighted(value),
                f"sap_ccms_dialog_{value}_seconds * on(sid, sap_instance) {STEP_RATE}",
            )
            for value in CCMS_AVERAGES.values()
        ),
        *(
            _labelled(per_step_mean(c, w), _per_step(_weighted(value), guard, window=w), DIALOG)
            for w in ("5m", FAST)
            for c, value in CCMS_AVERAGES.items()
            if w == "5m" or c in FAST_COMPONENTS
        ),
        *(
            _labelled(
                per_step_mean(c, w),
                _per_step(
                    f'sap_work_processes_activity{{type="DIA",activity="{a}"}}', guard, window=w
                ),
                DIALOG,
            )
            for w in ("5m", FAST)
            for c, a in WP_ACTIVITIES.items()
        ),
        *(
            _labelled(
                pooled_mean(c, w),
                _per_step(
                    f'sap_work_processes_activity{{type="DIA",activity="{WP_ACTIVITIES[c]}"}}',
                    guard,
                    by="sum by (sid)",
                    on="sid",
                    window=w,
                ),
                DIALOG,
            )
            for w in ("5m", FAST)
            for c in POOLED
        ),
        # The SD benchmark bound is on the system's average dialog response.
        _labelled(
            DIALOG_RESPONSE_MEAN,
            _per_step(_weighted(CCMS_AVERAGES["response"]), guard, by="sum by (sid)", on="sid"),
            {"source": "sapcontrol"},
        ),
    ]
    return RuleFile(
        "sapcontrol.rules.yml",
        WHY + HEALTH_WHY + MONITORING_WHY + NOC_WHY + HA_WHY + VERSIONS_WHY,
        [
            # The pages last in the group that records what they read: rules of one group
            # run in order, so a page sees this evaluation's means, not the last one's.
            {
                "name": "sap-sapcontrol-recording",
                "rules": [*rules, *(page_of(i, config) for i in FAST_INDICATORS)],
            },
            {"name": "sap-sapcontrol-health", "rules": health_rules()},
            {"name": "sap-sapcontrol-monitoring", "rules": monitoring_rules()},
            {"name": "sap-sapcontrol-noc", "rules": noc_rules(config)},
            {"name": "sap-sapcontrol-ha", "rules": ha_rules()},
            {"name": "sap-sapcontrol-versions", "rules": version_rules()},
        ],
    )
