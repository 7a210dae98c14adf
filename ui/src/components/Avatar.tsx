/** The user's picture, or the initial of their name. */
export function Avatar({ name, url, size = 32 }: { name: string; url: string; size?: number }) {
  const initial = (name || '?').trim().charAt(0).toUpperCase() || '?';
  return url ? (
    <img className="avatar" src={url} alt="" width={size} height={size} />
  ) : (
    <span className="avatar avatar-initial" style={{ width: size, height: size }} aria-hidden="true">
      {initial}
    </span>
  );
}
