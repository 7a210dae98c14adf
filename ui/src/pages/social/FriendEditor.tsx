// The dialog that sets a friend's alias (3-50 characters, or none) and the tags they are under
// (existing ones ticked, new ones typed; the server creates missing tags).
import { useState, type KeyboardEvent } from 'react';
import { updateFriend } from '../../api/social';
import type { Friend } from '../../api/types';
import { Dialog } from '../../components/Dialog';
import { Field } from '../../components/fields';
import { FormError, SubmitButton, useForm } from '../../components/form';
import { useT } from '../../lib/i18n';
import { validateAlias, validateTagName } from '../../lib/validation';
import { toast, withLoading } from '../../stores/feedback';
import { displayName } from './people';

export function FriendEditor({
  friend,
  allTags,
  onClose,
  onSaved,
}: {
  friend: Friend;
  allTags: string[];
  onClose: () => void;
  onSaved: (f: Friend) => void;
}) {
  const t = useT();
  const [alias, setAlias] = useState(friend.alias ?? '');
  const [tags, setTags] = useState<string[]>(friend.tags);
  const [newTag, setNewTag] = useState('');
  const [added, setAdded] = useState<string[]>([]);
  const choices = [...new Set([...allTags, ...tags, ...added])];
  const form = useForm<'alias' | 'tag'>({
    validate: () => ({
      alias: alias.trim() ? validateAlias(alias) : null,
      tag: newTag.trim() ? validateTagName(newTag) : null,
    }),
    action: async () => {
      const extra = newTag.trim();
      const next = extra && !tags.includes(extra) ? [...tags, extra] : tags;
      const saved = await withLoading(() => updateFriend(friend.user_id, { alias: alias.trim() || null, tags: next }));
      toast('success', t('saved'));
      onSaved(saved);
    },
  });
  const toggle = (name: string) => setTags((list) => (list.includes(name) ? list.filter((x) => x !== name) : [...list, name]));
  // Enter in "New tag" adds the tag to the choices, checked, and keeps the dialog open (issue 26:
  // it saved and closed); Save still takes a tag left typed in the field.
  const [tagError, setTagError] = useState<string | undefined>();
  const onNewTagKey = (e: KeyboardEvent<HTMLInputElement>) => {
    if (e.key !== 'Enter' || e.nativeEvent.isComposing) return;
    e.preventDefault();
    const name = newTag.trim();
    if (!name) return;
    const invalid = validateTagName(name);
    setTagError(invalid ? t(invalid) : undefined);
    if (invalid) return;
    setTags((list) => (list.includes(name) ? list : [...list, name]));
    if (!choices.includes(name)) setAdded((list) => [...list, name]);
    setNewTag('');
  };
  return (
    <Dialog open title={t('edit_friend_title', { name: displayName(friend) })} onClose={onClose}>
      <form onSubmit={form.submit} noValidate className="friend-editor">
        <Field
          label={t('alias')}
          value={alias}
          onChange={(e) => setAlias(e.target.value)}
          error={form.error('alias')}
          hint={t('alias_hint')}
          autoComplete="off"
        />
        <fieldset className="tag-choices">
          <legend>{t('friend_tags')}</legend>
          {choices.length === 0 ? <p className="muted small-text">{t('no_tags_yet')}</p> : null}
          {choices.map((name) => (
            <label key={name} className="check">
              <input type="checkbox" checked={tags.includes(name)} onChange={() => toggle(name)} />
              {name}
            </label>
          ))}
        </fieldset>
        <Field
          label={t('new_tag')}
          value={newTag}
          onChange={(e) => {
            setNewTag(e.target.value);
            setTagError(undefined);
          }}
          onKeyDown={onNewTagKey}
          error={form.error('tag') ?? tagError}
          hint={t('new_tag_hint')}
          autoComplete="off"
        />
        <FormError form={form} />
        <div className="dialog-actions">
          <button type="button" className="button ghost" onClick={onClose}>
            {t('cancel')}
          </button>
          <SubmitButton form={form}>{t('save')}</SubmitButton>
        </div>
      </form>
    </Dialog>
  );
}
