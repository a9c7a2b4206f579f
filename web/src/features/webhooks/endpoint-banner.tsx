import { Button } from '../../components/button';
import { Time } from '../../components/time';
import type { Endpoint } from './webhooks-form';

// Why nothing is being sent (a disabled endpoint, with re-enable), or that failures are adding up.

export function EndpointBanner({
  endpoint,
  canWrite,
  busy,
  onEnable,
}: {
  endpoint: Endpoint;
  canWrite: boolean;
  busy: boolean;
  onEnable: () => void;
}) {
  if (!endpoint.enabled) {
    return (
      <div className="banner banner-warn banner-action" role="status" data-disabled>
        <div>
          <strong>This endpoint is disabled: nothing is sent to it.</strong>
          <p>
            {endpoint.disabled_reason ? <>Why: {endpoint.disabled_reason}. </> : null}
            {endpoint.disabled_at ? (
              <>
                Since <Time iso={endpoint.disabled_at} />.
              </>
            ) : null}{' '}
            Re-enabling resets its failure count; then redeliver what it missed.
          </p>
        </div>
        {canWrite ? (
          <Button tone="primary" busy={busy} onClick={onEnable}>
            Re-enable
          </Button>
        ) : null}
      </div>
    );
  }
  if (endpoint.failed_deliveries > 0) {
    return (
      <div className="banner banner-warn" role="status">
        <p>
          {endpoint.failed_deliveries} deliveries in a row failed after every retry; after three the endpoint is
          disabled.
        </p>
      </div>
    );
  }
  return null;
}
