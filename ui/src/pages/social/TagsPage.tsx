// /friends/tags: the person's tags with how many friends are under each; create, rename, delete.
import { useState } from 'react';
import { Link } from 'react-router';
import { createTag, deleteTag, fetchTags, renameTag } from '../../api/social';
import type { Tag } from '../../api/types';
import { ConfirmDialog, Dialog, useConfirm } from '../../components/Dialog';
import { Field } from '../../components/fields';
import { FormCard, FormError, SubmitButton, useForm } from '../../components/form';
import { ActionTable, AsyncItems, PageHeader, Section } from '../../components/sections';
import { useT } from '../../lib/i18n';
import { paths } from '../../lib/paths';
import { useAsync } from '../../lib/useAsync';
import { validateTagName } from '../../lib/validation';
import { toast, withLoading } from '../../stores/feedback';
import { useLiveEvent } from '../../stores/live';

function CreateTag({ onCreated }: { onCreated: () => void }) {
  const t = useT();
  const [name, setName] = useState('');
  const form = useForm<'name'>({
    validate: () => ({ name: validateTagName(name) }),
    action: async () => {
      await withLoading(() => createTag(name.trim()));
      toast('success', t('tag_created'));
      setName('');
      onCreated();
    },
    serverErrorField: 'name',
  });
  return (
    <FormCard id="create-tag-title" title={t('create_tag')} submitLabel={t('create')} form={form}>
      <Field label={t('tag_name')} value={name} onChange={(e) => setName(e.target.value)} error={form.error('name')} autoComplete="off" />
    </FormCard>
  );
}

function RenameTag({ tag, onClose, onRenamed }: { tag: Tag; onClose: () => void; onRenamed: () => void }) {
  const t = useT();
  const [name, setName] = useState(tag.name);
  const form = useForm<'name'>({
    validate: () => ({ name: validateTagName(name) }),
    action: async () => {
      await withLoading(() => renameTag(tag.name, name.trim()));
      toast('success', t('tag_renamed'));
      onRenamed();
    },
    serverErrorField: 'name',
  });
  return (
    <Dialog open title={t('rename_tag', { name: tag.name })} onClose={onClose}>
      <form onSubmit={form.submit} noValidate>
        <Field label={t('tag_name')} value={name} onChange={(e) => setName(e.target.value)} error={form.error('name')} autoComplete="off" />
        <FormError form={form} />
        <div className="dialog-actions">
          <button type="button" className="button ghost" onClick={onClose}>
            {t('cancel')}
          </button>
          <SubmitButton form={form}>{t('rename')}</SubmitButton>
        </div>
      </form>
    </Dialog>
  );
}

export default function TagsPage() {
  const t = useT();
  const tags = useAsync(() => fetchTags(), []);
  const [renaming, setRenaming] = useState<Tag | null>(null);
  useLiveEvent((e) => {
    if (e.kind === 'friend' || e.kind === 'reload') tags.refresh();
  });
  const del = useConfirm(async (tag: Tag) => {
    await withLoading(() => deleteTag(tag.name));
    toast('success', t('tag_deleted'));
    tags.refresh();
  });
  return (
    <div className="page stack">
      <PageHeader
        title={t('friend_tags')}
        subtitle={t('tags_intro')}
        actions={
          <Link className="button ghost" to={paths.console.friends()}>
            {t('friends')}
          </Link>
        }
      />
      <div className="grid-2">
        <CreateTag onCreated={tags.refresh} />
        <Section className="card" id="tags-title" title={t('my_tags')}>
          <AsyncItems state={tags} emptyIcon="friends" emptyTitle={t('no_tags')}>
            {(items) => (
              <ActionTable columns={[t('tag_name'), t('friend_count')]} actionLabel={t('actions')}>
                {items.map((tag) => (
                  <tr key={tag.name} data-tag={tag.name}>
                    <td>
                      <Link to={paths.console.friends(tag.name)}>{tag.name}</Link>
                    </td>
                    <td>{tag.count}</td>
                    <td className="row-actions">
                      <button type="button" className="button ghost small" aria-label={`${t('rename')} ${tag.name}`} onClick={() => setRenaming(tag)}>
                        {t('rename')}
                      </button>
                      <button type="button" className="button ghost small" aria-label={`${t('delete')} ${tag.name}`} onClick={() => del.ask(tag)}>
                        {t('delete')}
                      </button>
                    </td>
                  </tr>
                ))}
              </ActionTable>
            )}
          </AsyncItems>
        </Section>
      </div>
      {renaming ? (
        <RenameTag
          tag={renaming}
          onClose={() => setRenaming(null)}
          onRenamed={() => {
            setRenaming(null);
            tags.refresh();
          }}
        />
      ) : null}
      <ConfirmDialog
        {...del.dialog}
        title={t('delete_tag')}
        text={t('confirm_delete_tag', { name: del.subject?.name ?? '' })}
        confirmLabel={t('delete')}
      />
    </div>
  );
}
