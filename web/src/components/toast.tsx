import { Toast } from 'radix-ui';
import { createContext, useCallback, useContext, useState, type ReactNode } from 'react';

// Toasts (Radix Toast): short confirmations and failures that do not need a page of their own.

export interface ToastInput {
  title: string;
  description?: string;
  tone?: 'info' | 'success' | 'error';
}
type ShowToast = (t: ToastInput) => void;

const ToastContext = createContext<ShowToast>(() => undefined);

export function ToastProvider({ children }: { children: ReactNode }) {
  const [toasts, setToasts] = useState<(ToastInput & { id: number })[]>([]);
  const show = useCallback<ShowToast>(
    (t) => setToasts((list) => [...list, { ...t, id: Date.now() + Math.random() }]),
    [],
  );
  return (
    <ToastContext.Provider value={show}>
      <Toast.Provider swipeDirection="right" duration={5000}>
        {children}
        {toasts.map((t) => (
          <Toast.Root
            key={t.id}
            className={`toast toast-${t.tone ?? 'info'}`}
            type={t.tone === 'error' ? 'foreground' : 'background'}
            onOpenChange={(open) => {
              if (!open) setToasts((list) => list.filter((x) => x.id !== t.id));
            }}
          >
            <Toast.Title className="toast-title">{t.title}</Toast.Title>
            {t.description ? <Toast.Description>{t.description}</Toast.Description> : null}
            <Toast.Close className="btn btn-small" aria-label="Dismiss">
              ×
            </Toast.Close>
          </Toast.Root>
        ))}
        <Toast.Viewport className="toast-viewport" />
      </Toast.Provider>
    </ToastContext.Provider>
  );
}

export function useToast(): ShowToast {
  return useContext(ToastContext);
}
