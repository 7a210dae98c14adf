// How a person shows on the social pages: their alias when the reader gave one, else their name.
import { Avatar } from '../../components/Avatar';

interface Someone {
  name: string;
  avatar_url: string;
  alias?: string | null;
  email?: string;
}

export function displayName(p: Someone): string {
  return p.alias || p.name || p.email || '';
}

/** Avatar, the display name, and below it what the alias hides (their name, their email). */
export function PersonCell({ person }: { person: Someone }) {
  const shown = displayName(person);
  const under = [person.alias ? person.name : '', person.email ?? ''].filter((s) => s && s !== shown).join(' · ');
  return (
    <span className="person">
      <Avatar name={shown} url={person.avatar_url} />
      <span className="person-text">
        <strong>{shown}</strong>
        {under ? <span className="muted small-text">{under}</span> : null}
      </span>
    </span>
  );
}
