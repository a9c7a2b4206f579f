import { useLoad } from '../../lib/use-load';
import { chaptersFromJson, type Chapter } from './player';
import { fetchText, formatDuration } from './files';
import type { Media, MediaFile } from '../../lib/api/objects';
import { parseVtt } from './vtt';
import { isRecord } from '../../lib/guards';

// The intelligence outputs of a media, read from its files (docs/tasks.md, "Intelligence"): the speech
// transcript (segments whose times seek the player), chapters (seek), description and tags, and
// NSFW scores. Outputs are JSON or WebVTT files; each is read defensively (no shape is assumed).

const str = (v: unknown) => (typeof v === 'string' ? v : undefined);
const numOf = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

function json(text: string): Record<string, unknown> {
  try {
    const v: unknown = JSON.parse(text);
    return isRecord(v) ? v : {};
  } catch {
    return {};
  }
}

/** The newest ready file of a kind (outputs of a later task replace earlier ones in what is shown). */
function latest(media: Media, kind: string): MediaFile | undefined {
  return media.files
    .filter((f) => f.kind === kind && f.status === 'ready')
    .sort((a, b) => b.created.localeCompare(a.created))[0];
}

function Seek({ at, onSeek }: { at: number; onSeek: (t: number) => void }) {
  return (
    <button type="button" onClick={() => onSeek(at)} aria-label={`Play from ${formatDuration(at)}`}>
      {formatDuration(at)}
    </button>
  );
}

function Transcript({ file, onSeek }: { file: MediaFile; onSeek: (t: number) => void }) {
  const doc = useLoad(async () => json(await fetchText(file.url)), file.id);
  if (!doc.data) return <p className="muted">{doc.error ? 'The transcript could not be read.' : 'Loading…'}</p>;
  const segments = (Array.isArray(doc.data.timeline) ? doc.data.timeline : []).flatMap((s: unknown) => {
    if (!isRecord(s)) return [];
    const start = numOf(s.start);
    const text = str(s.text);
    return start !== undefined && text ? [{ start, text, speaker: str(s.speaker) }] : [];
  });
  if (doc.data.detected === false || segments.length === 0) return <p className="muted">No speech was found.</p>;
  return (
    <ol className="seek-list" aria-label="Transcript">
      {segments.map((s, i) => (
        <li key={i}>
          <Seek at={s.start} onSeek={onSeek} />
          <span>
            {s.speaker ? <strong>{s.speaker}: </strong> : null}
            {s.text}
          </span>
        </li>
      ))}
    </ol>
  );
}

function Chapters({ file, onSeek }: { file: MediaFile; onSeek: (t: number) => void }) {
  const doc = useLoad(async () => {
    const text = await fetchText(file.url);
    return file.type.startsWith('text/vtt')
      ? parseVtt(text).map((c): Chapter => ({ start: c.start, end: c.end, title: c.text }))
      : chaptersFromJson(text);
  }, file.id);
  if (!doc.data) return <p className="muted">{doc.error ? 'The chapters could not be read.' : 'Loading…'}</p>;
  return (
    <ol className="seek-list" aria-label="Chapters">
      {doc.data.map((c, i) => (
        <li key={i}>
          <Seek at={c.start} onSeek={onSeek} />
          <span>{c.title || `Chapter ${i + 1}`}</span>
        </li>
      ))}
    </ol>
  );
}

function Description({ file }: { file: MediaFile }) {
  const doc = useLoad(async () => json(await fetchText(file.url)), file.id);
  if (!doc.data) return <p className="muted">{doc.error ? 'The description could not be read.' : 'Loading…'}</p>;
  const tags = Array.isArray(doc.data.tags) ? doc.data.tags.filter((t): t is string => typeof t === 'string') : [];
  return (
    <div>
      {str(doc.data.title) ? (
        <p>
          <strong>{str(doc.data.title)}</strong>
        </p>
      ) : null}
      {str(doc.data.description) ? <p>{str(doc.data.description)}</p> : null}
      {tags.length > 0 ? (
        <ul className="tags" aria-label="Tags">
          {tags.map((t) => (
            <li key={t} className="badge">
              {t}
            </li>
          ))}
        </ul>
      ) : null}
      {str(doc.data.engine) ? <p className="muted small">Engine: {str(doc.data.engine)}</p> : null}
    </div>
  );
}

function Nsfw({ file }: { file: MediaFile }) {
  const doc = useLoad(async () => json(await fetchText(file.url)), file.id);
  if (!doc.data) return <p className="muted">{doc.error ? 'The scores could not be read.' : 'Loading…'}</p>;
  const d = doc.data;
  const notScored = Array.isArray(d.not_scored) ? d.not_scored.filter((x): x is string => typeof x === 'string') : [];
  return (
    <div>
      <p>
        <span className={`badge ${d.detected === true ? 'badge-danger' : 'badge-ok'}`}>
          {d.detected === true ? 'Flagged' : 'Not flagged'}
        </span>
      </p>
      {['nudity', 'sexual', 'violence', 'gore', 'confidence'].map((k) => {
        const v = numOf(d[k]);
        return (
          <div className="score" key={k}>
            <span>{k}</span>
            {v !== undefined ? (
              <>
                <meter min={0} max={1} value={v} aria-label={`${k} score`} />
                <span className="num">{v.toFixed(2)}</span>
              </>
            ) : (
              <span className="muted small">not scored</span>
            )}
          </div>
        );
      })}
      {notScored.length > 0 ? <p className="muted small">Not scored by this engine: {notScored.join(', ')}</p> : null}
    </div>
  );
}

export function Intelligence({
  media,
  onSeek,
  playable,
}: {
  media: Media;
  onSeek: (t: number) => void;
  playable: boolean;
}) {
  const speech = latest(media, 'speech');
  const chapters = latest(media, 'chapters');
  const description = latest(media, 'description');
  const nsfw = latest(media, 'nsfw');
  const subtitles = latest(media, 'subtitles');
  if (!speech && !chapters && !description && !nsfw && !subtitles) return null;
  const seek = playable ? onSeek : () => undefined;
  return (
    <section className="section card" aria-labelledby="intel-h">
      <h2 id="intel-h">Intelligence</h2>
      {description ? (
        <>
          <h3>Description</h3>
          <Description file={description} />
        </>
      ) : null}
      {speech ? (
        <>
          <h3>Transcript</h3>
          <Transcript file={speech} onSeek={seek} />
        </>
      ) : subtitles && subtitles.type.startsWith('text/vtt') ? (
        <>
          <h3>Transcript (from subtitles)</h3>
          <SubtitleTranscript file={subtitles} onSeek={seek} />
        </>
      ) : null}
      {chapters ? (
        <>
          <h3>Chapters</h3>
          <Chapters file={chapters} onSeek={seek} />
        </>
      ) : null}
      {nsfw ? (
        <>
          <h3>NSFW scores</h3>
          <Nsfw file={nsfw} />
        </>
      ) : null}
    </section>
  );
}

function SubtitleTranscript({ file, onSeek }: { file: MediaFile; onSeek: (t: number) => void }) {
  const doc = useLoad(async () => parseVtt(await fetchText(file.url)), file.id);
  if (!doc.data) return <p className="muted">{doc.error ? 'The subtitles could not be read.' : 'Loading…'}</p>;
  return (
    <ol className="seek-list" aria-label="Transcript">
      {doc.data.map((c, i) => (
        <li key={i}>
          <Seek at={c.start} onSeek={onSeek} />
          <span>{c.text}</span>
        </li>
      ))}
    </ol>
  );
}
