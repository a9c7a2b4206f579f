// GET /models: which models an OpenAI-compatible provider serves (also a reachability check).
import { ProviderError } from '../errors.js';
import { providerRequest, type ProviderEndpoint } from './client.js';

export async function listModels(ep: ProviderEndpoint, signal?: AbortSignal): Promise<string[]> {
  const answer = await providerRequest(ep, 'GET', '/models', undefined, signal);
  const data = typeof answer === 'object' && answer !== null && 'data' in answer ? answer.data : undefined;
  if (!Array.isArray(data))
    throw new ProviderError('the provider answered 200 to GET /models without a data list', true, 200);
  return data
    .map((m: unknown) => (typeof m === 'object' && m !== null && 'id' in m && typeof m.id === 'string' ? m.id : null))
    .filter((id): id is string => id !== null);
}
