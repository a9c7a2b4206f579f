import type { InputHTMLAttributes } from 'react';

// A new password: the browser may offer to make one up; the API asks for at least 10 characters.

type Props = Omit<InputHTMLAttributes<HTMLInputElement>, 'type' | 'autoComplete' | 'minLength' | 'required'>;

export function NewPasswordInput(props: Props) {
  return <input {...props} type="password" autoComplete="new-password" minLength={10} required />;
}
