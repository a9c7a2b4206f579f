import { useEffect, useState } from 'react';

// Setup and invitation links carry their token in the URL's fragment (#token=…), which browsers
// never send to a server, so it stays out of every log on the way.

function tokenFromFragment(): string {
  return new URLSearchParams(window.location.hash.slice(1)).get('token') ?? '';
}

/** The fragment's token, kept current: pasting a link into a tab already on the page changes only the fragment. */
export function useFragmentToken(): string {
  const [token, setToken] = useState(tokenFromFragment);
  useEffect(() => {
    const onHash = () => setToken(tokenFromFragment());
    window.addEventListener('hashchange', onHash);
    return () => window.removeEventListener('hashchange', onHash);
  }, []);
  return token;
}
