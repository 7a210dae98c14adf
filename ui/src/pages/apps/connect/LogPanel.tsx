// The Logs block: the container's log lines (docker logs) with local time stamps and stderr marked,
// followed live over Server-Sent Events, searched, downloaded. At most LOG_MAX_LINES stay in memory.
import { saveBlob } from '../../../lib/download';
import { memo, useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState } from 'react';
import { fetchAppLogs, followAppLogs, type LogLine } from '../../../api/connect';
import { errorText } from '../../../lib/http';
import { useT } from '../../../lib/i18n';
import { ConnectBlock } from '../../../components/apps/connect';
import { Icon } from '../../../components/Icon';
import { LOG_MAX_LINES, LOG_TAIL, appendCapped, dropOverlap, filterLines, logDateTime, logFileName, logFileText, logTime, splitMatches, type ShownLine } from './logs';

type Phase = 'loading' | 'following' | 'paused' | 'ended';

/** Lines are handed to React at most this often while a burst arrives. */
const FLUSH_MS = 50;
/** How close to the end (px) counts as "at the bottom" for autoscroll. */
const BOTTOM_SLACK = 24;

const LogRow = memo(function LogRow({ line, query }: { line: ShownLine; query: string }) {
  return (
    <div className={`log-line${line.stream === 'stderr' ? ' stderr' : ''}`} data-stream={line.stream}>
      <time className="log-time" title={logDateTime(line.ts)}>
        {logTime(line.ts)}
      </time>
      {line.stream === 'stderr' ? <span className="log-stream">stderr</span> : null}
      <span className="log-text">
        {splitMatches(line.text, query).map((p, i) => (p.match ? <mark key={i}>{p.text}</mark> : p.text))}
      </span>
    </div>
  );
});

export function LogPanel({ id, name }: { id: string; name: string }) {
  const t = useT();
  const [lines, setLines] = useState<ShownLine[]>([]);
  const [phase, setPhase] = useState<Phase>('loading');
  const [endReason, setEndReason] = useState('');
  const [follow, setFollow] = useState(true);
  const [query, setQuery] = useState('');
  const [generation, setGeneration] = useState(0);
  const linesRef = useRef(lines);
  linesRef.current = lines;
  const nextN = useRef(0);
  const box = useRef<HTMLDivElement>(null);
  const atBottom = useRef(true);

  const add = useCallback((incoming: LogLine[]) => {
    const start = nextN.current;
    nextN.current += incoming.length;
    setLines((prev) => appendCapped(prev, incoming, start));
  }, []);

  useEffect(() => {
    const controller = new AbortController();
    const { signal } = controller;
    const shown = linesRef.current;
    if (!follow) {
      // Paused: what is loaded stays; only a panel with nothing yet loads the tail once.
      if (shown.length) {
        setPhase('paused');
        return;
      }
      setPhase('loading');
      fetchAppLogs(id, LOG_TAIL, signal)
        .then((d) => {
          if (signal.aborted) return;
          add(d.lines);
          setPhase('paused');
        })
        .catch((err) => {
          if (signal.aborted) return;
          setEndReason(errorText(err));
          setPhase('ended');
        });
      return () => controller.abort();
    }
    // Following: the stream starts with its tail, which overlaps what is shown after a reconnect.
    let lastTs: string | number | null = shown.length ? shown[shown.length - 1].ts : null;
    let pending: LogLine[] = [];
    let timer: ReturnType<typeof setTimeout> | null = null;
    const flush = () => {
      timer = null;
      if (!pending.length || signal.aborted) return;
      add(pending);
      pending = [];
    };
    setPhase(shown.length ? 'following' : 'loading');
    setEndReason('');
    followAppLogs(
      id,
      LOG_TAIL,
      (batch) => {
        let fresh = batch;
        if (lastTs !== null) {
          const r = dropOverlap(batch, lastTs);
          fresh = r.lines;
          if (r.caughtUp) lastTs = null;
        }
        setPhase('following');
        if (!fresh.length) return;
        pending.push(...fresh);
        if (!timer) timer = setTimeout(flush, FLUSH_MS);
      },
      signal,
    )
      .then((end) => {
        if (signal.aborted) return;
        if (timer) clearTimeout(timer);
        flush();
        setEndReason(end.reason ?? t('logs_lost'));
        setPhase('ended');
      })
      .catch((err) => {
        if (signal.aborted) return;
        if (timer) clearTimeout(timer);
        flush();
        setEndReason(errorText(err));
        setPhase('ended');
      });
    return () => {
      controller.abort();
      if (timer) clearTimeout(timer);
    };
    // `t` changes with the language; the stream need not restart for it.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [id, follow, generation, add]);

  const shown = useMemo(() => filterLines(lines, query), [lines, query]);

  // Autoscroll while at the bottom only: reading older lines is not interrupted.
  useLayoutEffect(() => {
    const el = box.current;
    if (el && atBottom.current) el.scrollTop = el.scrollHeight;
  }, [shown]);
  const onScroll = () => {
    const el = box.current;
    if (el) atBottom.current = el.scrollHeight - el.scrollTop - el.clientHeight <= BOTTOM_SLACK;
  };

  const download = () => {
    saveBlob(new Blob([logFileText(lines)], { type: 'text/plain;charset=utf-8' }), logFileName(name));
  };

  const reconnect = () => {
    setFollow(true);
    setGeneration((g) => g + 1);
  };

  return (
    <ConnectBlock
      kind="logs"
      title={t('connect_logs')}
      wide
      actions={
        <>
          <label className="checkbox-row log-follow">
            <input type="checkbox" checked={follow} onChange={(e) => setFollow(e.target.checked)} />
            <span>{t('logs_follow')}</span>
          </label>
          <button type="button" className="button small ghost" onClick={download} disabled={!lines.length}>
            <Icon name="download" size={14} /> {t('download')}
          </button>
        </>
      }
    >
      <div className="log-tools">
        <label className="log-search">
          <Icon name="search" size={14} />
          <input type="search" value={query} onChange={(e) => setQuery(e.target.value)} placeholder={t('logs_search')} aria-label={t('logs_search')} />
        </label>
        {lines.length ? (
          <span className="muted small" data-testid="log-count">
            {t('logs_count', { shown: shown.length, total: lines.length })}
            {lines.length >= LOG_MAX_LINES ? ` · ${t('logs_capped', { max: LOG_MAX_LINES })}` : ''}
          </span>
        ) : null}
      </div>
      <div className="log-view" ref={box} onScroll={onScroll} role="log" aria-live="off" aria-label={t('connect_logs')} data-phase={phase}>
        {shown.map((l) => (
          <LogRow key={l.n} line={l} query={query} />
        ))}
        {phase === 'loading' && !lines.length ? <p className="log-note">{t('logs_loading')}</p> : null}
        {phase !== 'loading' && !lines.length ? <p className="log-note">{t('logs_empty')}</p> : null}
        {lines.length > 0 && !shown.length ? <p className="log-note">{t('logs_no_match')}</p> : null}
      </div>
      {phase === 'ended' ? (
        <div className="connect-status ended" role="status" data-testid="log-end">
          <span>{endReason}</span>
          <button type="button" className="button small primary" onClick={reconnect}>
            {t('reconnect')}
          </button>
        </div>
      ) : phase === 'paused' ? (
        <p className="connect-hint">{t('logs_paused')}</p>
      ) : null}
    </ConnectBlock>
  );
}
