// The "Two-factor sign-in" section of /account (docs/identity.md, "Two-factor sign-in"): turn it
// on (scan the QR code the server draws, or type the secret; confirm with a code; the recovery
// codes are shown once), see how many recovery codes are left, turn it off (password and a code).
// Its words live here, in the account page's chunk, not in the first load.
import { useState } from 'react';
import { confirmTwoFactor, fetchTwoFactor, startTwoFactor, turnOffTwoFactor } from '../../api/iam';
import type { TwoFactorSetup } from '../../api/types';
import { Field, PasswordField } from '../../components/fields';
import { FormError, SubmitButton, useForm } from '../../components/form';
import { Icon } from '../../components/Icon';
import { Section } from '../../components/sections';
import { useLang } from '../../lib/i18n';
import { useAsync } from '../../lib/useAsync';
import { toast, withLoading } from '../../stores/feedback';

const WORDS = {
  en: {
    title: 'Two-factor sign-in',
    intro: 'After your password, sign-in asks for a code from an authenticator app on your phone (Google Authenticator, Microsoft Authenticator, 1Password…). Wallet moves above a limit ask for one too.',
    on: 'On',
    off: 'Off',
    left: '{n} recovery codes left',
    required: 'The operator requires two-factor sign-in for operators and company administrators: turn it on to continue.',
    start: 'Turn on',
    scan: 'Scan this QR code with your authenticator app, or type the key:',
    code: 'Code from your authenticator app',
    confirm: 'Confirm',
    saved: 'Two-factor sign-in is on',
    codes_title: 'Your recovery codes',
    codes_note: 'Keep these codes somewhere safe: each signs you in once if you lose your phone. They will not be shown again.',
    done: 'I have saved them',
    password: 'Password',
    turn_off: 'Turn off',
    turned_off: 'Two-factor sign-in is off',
  },
  zh: {
    title: '两步验证',
    intro: '输入密码后，登录还需要手机上身份验证器应用（Google Authenticator、Microsoft Authenticator、1Password 等）中的验证码。超过限额的钱包转账也需要验证码。',
    on: '已开启',
    off: '未开启',
    left: '剩余 {n} 个恢复码',
    required: '运营者要求运营者和企业管理员开启两步验证：请开启后继续。',
    start: '开启',
    scan: '用身份验证器应用扫描此二维码，或手动输入密钥：',
    code: '身份验证器应用中的验证码',
    confirm: '确认',
    saved: '两步验证已开启',
    codes_title: '您的恢复码',
    codes_note: '请妥善保存这些恢复码：手机丢失时，每个恢复码可登录一次。它们不会再次显示。',
    done: '我已保存',
    password: '密码',
    turn_off: '关闭',
    turned_off: '两步验证已关闭',
  },
};

type Words = (typeof WORDS)['en'];

function Enrol({ w, onDone }: { w: Words; onDone: (codes: string[]) => void }) {
  const [setup, setSetup] = useState<TwoFactorSetup | null>(null);
  const [code, setCode] = useState('');
  const start = useForm<never>({ action: async () => setSetup(await withLoading(() => startTwoFactor())) });
  const confirm = useForm<'code'>({
    action: async () => {
      const answer = await withLoading(() => confirmTwoFactor(code.trim()));
      toast('success', w.saved);
      onDone(answer.recovery_codes);
    },
    serverFields: { code: 'code' },
  });
  if (!setup)
    return (
      <form onSubmit={start.submit}>
        <FormError form={start} />
        <SubmitButton form={start}>{w.start}</SubmitButton>
      </form>
    );
  return (
    <form className="two-factor-enrol" onSubmit={confirm.submit} noValidate>
      <p>{w.scan}</p>
      <img className="two-factor-qr" width={200} height={200} alt="QR" src={`data:image/svg+xml;charset=utf-8,${encodeURIComponent(setup.qr_svg)}`} />
      <p>
        <code className="two-factor-secret mono">{setup.secret}</code>
      </p>
      <Field label={w.code} name="code" inputMode="numeric" autoComplete="one-time-code" value={code} onChange={(e) => setCode(e.target.value)} error={confirm.error('code')} />
      <FormError form={confirm} />
      <SubmitButton form={confirm}>{w.confirm}</SubmitButton>
    </form>
  );
}

function TurnOff({ w, onDone }: { w: Words; onDone: () => void }) {
  const [password, setPassword] = useState('');
  const [code, setCode] = useState('');
  const form = useForm<'password' | 'code'>({
    action: async () => {
      await withLoading(() => turnOffTwoFactor(password, code.trim()));
      toast('success', w.turned_off);
      onDone();
    },
    serverFields: { password: 'password', code: 'code' },
  });
  return (
    <form className="two-factor-off" onSubmit={form.submit} noValidate>
      <PasswordField label={w.password} autoComplete="current-password" value={password} onChange={(e) => setPassword(e.target.value)} error={form.error('password')} />
      <Field label={w.code} name="off-code" inputMode="numeric" autoComplete="one-time-code" value={code} onChange={(e) => setCode(e.target.value)} error={form.error('code')} />
      <FormError form={form} />
      <SubmitButton form={form}>{w.turn_off}</SubmitButton>
    </form>
  );
}

export function TwoFactor() {
  const w = WORDS[useLang()];
  const status = useAsync((_signal) => fetchTwoFactor(), []);
  const [codes, setCodes] = useState<string[] | null>(null);
  const s = status.data;
  return (
    <Section className="card two-factor" id="two-factor-title" title={w.title}>
      <p className="muted">{w.intro}</p>
      {s?.required ? (
        <p className="api-key-warning" role="alert">
          <Icon name="warning" size={18} />
          <span>{w.required}</span>
        </p>
      ) : null}
      {codes ? (
        <div className="two-factor-codes">
          <h3>{w.codes_title}</h3>
          <p className="api-key-warning" role="note">
            <Icon name="warning" size={18} />
            <span>{w.codes_note}</span>
          </p>
          <ul className="mono">
            {codes.map((c) => (
              <li key={c}>{c}</li>
            ))}
          </ul>
          <button type="button" className="button primary" onClick={() => setCodes(null)}>
            {w.done}
          </button>
        </div>
      ) : s === undefined ? null : s.enabled ? (
        <>
          <p className="two-factor-state">
            <strong>{w.on}</strong> · {w.left.replace('{n}', String(s.recovery_codes_left))}
          </p>
          <TurnOff w={w} onDone={status.reload} />
        </>
      ) : (
        <>
          <p className="two-factor-state">
            <strong>{w.off}</strong>
          </p>
          <Enrol
            w={w}
            onDone={(list) => {
              setCodes(list);
              status.reload();
            }}
          />
        </>
      )}
    </Section>
  );
}
