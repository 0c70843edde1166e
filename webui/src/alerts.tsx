// The alerts page: what wlmon's Alertmanager holds now (active, inhibited, silenced), read
// through Perses' proxy (the `alertmanager` global datasource, wlmon/stack/perses.py), so
// the operator sees on the dashboards' own site what will be, or will not be, notified.
import {
  Box,
  Chip,
  Link,
  Stack,
  Table,
  TableBody,
  TableCell,
  TableHead,
  TableRow,
  ToggleButton,
  ToggleButtonGroup,
  Typography,
} from '@mui/material';
import { useQuery } from '@tanstack/react-query';
import { ReactElement, useState } from 'react';
import { Link as RouterLink } from 'react-router-dom';
import { getJSON } from './api';

// /api/v2/alerts of Alertmanager's OpenAPI (gettableAlerts), the fields read here.
export interface GettableAlert {
  labels: Record<string, string>;
  annotations: Record<string, string>;
  startsAt: string;
  fingerprint: string;
  receivers: { name: string }[];
  status: { state: string; silencedBy: string[]; inhibitedBy: string[] };
}

export type AlertState = 'active' | 'inhibited' | 'silenced';

const ALERTS_URL = '/proxy/globaldatasources/alertmanager/api/v2/alerts';
// The dead man's switch's heartbeat (alerts/monitoring.py): always firing while the
// pipeline works, so it is news only when it is missing.
const HEARTBEAT = 'SAPWatchdog';
const SEVERITY_ORDER: Record<string, number> = { critical: 0, warning: 1, info: 2 };
const REFRESH_MS = 15_000;

// A silence wins over an inhibition, as Alertmanager's own UI lists them.
export function stateOf(alert: GettableAlert): AlertState {
  if (alert.status.silencedBy.length > 0) return 'silenced';
  if (alert.status.inhibitedBy.length > 0) return 'inhibited';
  return 'active';
}

function since(startsAt: string, now: number): string {
  const start = new Date(startsAt);
  const minutes = Math.max(0, Math.round((now - start.getTime()) / 60_000));
  const ago = minutes < 60 ? `${minutes} min` : `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
  return `${start.toLocaleString()} (${ago} ago)`;
}

function byUrgency(a: GettableAlert, b: GettableAlert): number {
  const rank = (x: GettableAlert): number => SEVERITY_ORDER[x.labels.severity ?? ''] ?? 9;
  return rank(a) - rank(b) || a.startsAt.localeCompare(b.startsAt);
}

// One row per alert name, SID, severity and state, as Alertmanager groups what it sends:
// one cause over 30 instances is one line with its instances, not 30 lines.
interface AlertGroup {
  key: string;
  alerts: GettableAlert[];
}

function grouped(alerts: GettableAlert[]): AlertGroup[] {
  const groups = new Map<string, GettableAlert[]>();
  for (const a of alerts) {
    const key = [stateOf(a), a.labels.alertname, a.labels.sid ?? '', a.labels.severity ?? ''].join('|');
    groups.set(key, [...(groups.get(key) ?? []), a]);
  }
  return [...groups.entries()].map(([key, members]) => ({ key, alerts: members }));
}

const SHOWN_INSTANCES = 6;

function instances(alerts: GettableAlert[]): string {
  const names = [...new Set(alerts.map((a) => a.labels.sap_instance ?? a.labels.host ?? a.labels.instance ?? '—'))].sort((x, y) =>
    x.localeCompare(y, undefined, { numeric: true })
  );
  const head = names.slice(0, SHOWN_INSTANCES).join(', ');
  return names.length > SHOWN_INSTANCES ? `${names.length}: ${head}, …` : head;
}

function AlertRows({ alerts, now }: { alerts: GettableAlert[]; now: number }): ReactElement {
  return (
    <Table size="small" data-testid="alerts-table">
      <TableHead>
        <TableRow>
          {['State', 'Alert', 'Severity', 'SID', 'Instances', 'Since', 'Summary', 'Receivers'].map((h) => (
            <TableCell key={h}>{h}</TableCell>
          ))}
        </TableRow>
      </TableHead>
      <TableBody>
        {grouped(alerts).map(({ key, alerts: members }) => {
          const first = members[0];
          const earliest = members.map((m) => m.startsAt).sort()[0];
          const receivers = [...new Set(members.flatMap((m) => m.receivers.map((r) => r.name)))];
          return (
            <TableRow key={key} data-fingerprints={members.map((m) => m.fingerprint).join(' ')} data-state={stateOf(first)}>
              <TableCell>{stateOf(first)}</TableCell>
              <TableCell>
                {first.annotations.runbook_url ? (
                  <Link href={first.annotations.runbook_url}>{first.labels.alertname}</Link>
                ) : (
                  first.labels.alertname
                )}
              </TableCell>
              <TableCell>
                <Chip
                  size="small"
                  label={first.labels.severity ?? '—'}
                  color={
                    first.labels.severity === 'critical' ? 'error' : first.labels.severity === 'warning' ? 'warning' : 'default'
                  }
                />
              </TableCell>
              <TableCell>{first.labels.sid ?? '—'}</TableCell>
              <TableCell>{instances(members)}</TableCell>
              <TableCell>{since(earliest, now)}</TableCell>
              <TableCell>{first.annotations.summary ?? ''}</TableCell>
              <TableCell>{receivers.join(', ')}</TableCell>
            </TableRow>
          );
        })}
      </TableBody>
    </Table>
  );
}

export function AlertsView({ fallback }: { fallback: (error: unknown) => ReactElement }): ReactElement {
  const [shown, setShown] = useState<AlertState>('active');
  const { data, error, dataUpdatedAt } = useQuery(['alertmanager-alerts'], () => getJSON<GettableAlert[]>(ALERTS_URL), {
    refetchInterval: REFRESH_MS,
  });
  if (error) return fallback(error);
  if (!data) return <Typography sx={{ p: 3 }}>Asking Alertmanager…</Typography>;
  const heartbeat = data.find((a) => a.labels.alertname === HEARTBEAT);
  const alerts = data.filter((a) => a.labels.alertname !== HEARTBEAT).sort(byUrgency);
  const count = (s: AlertState): number => alerts.filter((a) => stateOf(a) === s).length;
  return (
    <Box component="main" sx={{ p: 3, flexGrow: 1 }}>
      <Typography variant="h2" sx={{ mb: 1 }}>
        <Link component={RouterLink} to="/">
          wlmon
        </Link>{' '}
        / Alerts in Alertmanager
      </Typography>
      <Typography data-testid="heartbeat" color={heartbeat ? 'text.secondary' : 'error'} sx={{ mb: 2 }}>
        {heartbeat
          ? `Heartbeat (${HEARTBEAT}) firing since ${since(heartbeat.startsAt, dataUpdatedAt)}: Prometheus reaches Alertmanager.`
          : `No heartbeat (${HEARTBEAT}): Prometheus does not reach Alertmanager, so nothing below is complete.`}
      </Typography>
      <Stack direction="row" spacing={2} sx={{ mb: 2, alignItems: 'center' }}>
        <ToggleButtonGroup exclusive size="small" value={shown} onChange={(_, v) => v && setShown(v)}>
          {(['active', 'inhibited', 'silenced'] as AlertState[]).map((s) => (
            <ToggleButton key={s} value={s} data-testid={`show-${s}`}>
              {s} ({count(s)})
            </ToggleButton>
          ))}
        </ToggleButtonGroup>
        <Typography variant="body2" color="text.secondary">
          Active alerts are notified; inhibited and silenced ones are not. Read at{' '}
          {new Date(dataUpdatedAt).toLocaleTimeString()}, every {REFRESH_MS / 1000} s.
        </Typography>
      </Stack>
      <AlertRows alerts={alerts.filter((a) => stateOf(a) === shown)} now={dataUpdatedAt} />
    </Box>
  );
}
