import { createParamDecorator } from '@nestjs/common';
import { currentSignal } from '@ballast/core';

/**
 * The factory behind {@link CallSignal}. Nest resolves handler parameters before the handler runs; a decorated
 * HTTP handler runs its policy around the handler only (see http-handler-wrapping.ts), so the wrapper recognises
 * this factory and puts each attempt's own signal in its place. @internal
 */
export function callSignalFactory(_data: unknown): AbortSignal | undefined {
  return currentSignal();
}

/**
 * The signal of the running call (aborted on attempt timeout, deadline, a lost hedge race or client disconnect),
 * injected as a handler parameter. Same as calling `currentSignal()` from `@ballast/core` in the handler; undefined
 * outside a `@Resilient` handler.
 *
 * @publicApi
 */
export const CallSignal = createParamDecorator(callSignalFactory);
