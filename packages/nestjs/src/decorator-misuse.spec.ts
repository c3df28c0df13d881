import 'reflect-metadata';
import { Controller, Get, Injectable, Post, Sse, type Type } from '@nestjs/common';
import { EventPattern, MessagePattern } from '@nestjs/microservices';
import { ResiliencePolicy, isResilienceError } from '@ballast/core';
import { Observable, Subject, of } from 'rxjs';
import { bootstrapError as bootError } from './__tests__/harness';
import { Hedged, Resilient, ResilienceModule } from './index';

/**
 * The README promises that unsupported uses of the decorators fail loudly — at bootstrap, or at class definition
 * when the decorator alone can tell — instead of silently doing nothing.
 */
function bootstrapError(controllers: Type[], providers: Type[] = []): Promise<unknown> {
  return bootError({
    imports: [
      ResilienceModule.forRoot({ policies: [new ResiliencePolicy({ name: 'plain', strategies: [] })] }),
    ],
    controllers,
    providers,
  });
}

@Injectable()
class StockClient {
  async stock(): Promise<number> {
    return 7;
  }
}

describe('@Resilient on a controller method that is not a handler', () => {
  @Controller('products')
  class ProductsController {
    constructor(private readonly client: StockClient) {}

    @Get()
    async list(): Promise<number> {
      return this.lookup();
    }

    /** A helper the handler calls: the explorer never wraps controllers, so this would run bare. */
    @Resilient('plain')
    private async lookup(): Promise<number> {
      return this.client.stock();
    }
  }

  class BaseController {
    @Hedged('plain', { route: 'base' })
    protected async fetchAll(): Promise<number[]> {
      return [];
    }
  }

  @Controller('derived')
  class DerivedController extends BaseController {
    @Get()
    list(): Promise<number[]> {
      return this.fetchAll();
    }
  }

  it('fails the bootstrap naming the class, the method and what to do', async () => {
    const error = await bootstrapError([ProductsController], [StockClient]);
    expect(isResilienceError(error) && error.kind).toBe('configuration');
    const message = (error as Error).message;
    expect(message).toContain('ProductsController.lookup');
    expect(message).toContain('not a route or message handler');
    expect(message).toContain('move the method to a provider');
  });

  it('also for an inherited helper, and for @Hedged', async () => {
    const message = ((await bootstrapError([DerivedController])) as Error).message;
    expect(message).toContain('DerivedController.fetchAll');
    expect(message).toContain('@Resilient/@Hedged');
  });

  it('accepts every kind of handler: HTTP, SSE, message and event patterns, class-level decorators', async () => {
    @Controller('ok')
    class Handlers {
      @Get('a')
      @Resilient('plain')
      a(): string {
        return 'a';
      }

      @Post('b')
      @Hedged('plain')
      b(): string {
        return 'b';
      }

      @Sse('c')
      @Resilient('plain')
      c(): Observable<{ data: string }> {
        return of({ data: 'c' });
      }

      @MessagePattern('d')
      @Resilient('plain')
      d(): string {
        return 'd';
      }

      @EventPattern('e')
      @Resilient('plain')
      e(_event: unknown): void {}
    }

    @Controller('class-level')
    @Resilient('plain')
    class ClassLevel {
      @Get()
      get(): string {
        return this.helper();
      }

      private helper(): string {
        return 'undecorated helpers are fine';
      }
    }

    expect(await bootstrapError([Handlers, ClassLevel])).toBeUndefined();
  });
});

describe('@Resilient on something that is not a method', () => {
  function definitionError(define: () => unknown): Error {
    try {
      define();
    } catch (error) {
      return error as Error;
    }
    throw new Error('the class was defined without an error');
  }

  it('refuses a getter with a message', () => {
    const error = definitionError(() => {
      class Catalog {
        @Resilient('plain')
        get size(): number {
          return 1;
        }
      }
      return Catalog;
    });
    expect(isResilienceError(error) && error.kind).toBe('configuration');
    expect(error.message).toContain("@Resilient('plain') on Catalog.size");
    expect(error.message).toContain('a getter');
    expect(error.message).toContain('only methods');
  });

  it('refuses a setter', () => {
    const error = definitionError(() => {
      class Catalog {
        @Hedged('plain')
        set size(_: number) {}
      }
      return Catalog;
    });
    expect(error.message).toContain("@Hedged('plain') on Catalog.size");
    expect(error.message).toContain('a setter');
  });

  it('refuses a property (which it would otherwise ignore)', () => {
    class Catalog {
      size = 1;
    }
    const error = definitionError(() =>
      Reflect.decorate([Resilient('plain') as PropertyDecorator], Catalog.prototype, 'size'),
    );
    expect(error.message).toContain("@Resilient('plain') on Catalog.size");
    expect(error.message).toContain('a property');
  });

  it('refuses a static method (never wrapped, never a handler)', () => {
    const error = definitionError(() => {
      class Catalog {
        @Resilient('plain')
        static async load(): Promise<void> {}
      }
      return Catalog;
    });
    expect(error.message).toContain("@Resilient('plain') on Catalog.load");
    expect(error.message).toContain('a static method');
  });
});

describe('@Resilient and @Hedged with bad arguments', () => {
  it('refuse a policy that is not a name and a route that is neither a string nor a function, when the class is defined', () => {
    const resilient = Resilient as (policy: unknown, options?: unknown) => unknown;
    const hedged = Hedged as (policy: unknown, options?: unknown) => unknown;
    expect(() => resilient(42)).toThrow(
      expect.objectContaining({
        kind: 'configuration',
        message: 'Invalid @Resilient(): the policy must be a policy name, got 42',
      }),
    );
    expect(() => hedged('  ', { route: 7 })).toThrow(
      expect.objectContaining({
        kind: 'configuration',
        message:
          "Invalid @Hedged(): the policy must be a policy name, got '  '; options.route must be a string, a function of the call or undefined, got 7",
      }),
    );
    expect(() => resilient('plain', null)).toThrow(
      'Invalid @Resilient(): the options must be an object ({ route? }), got null',
    );
    expect(() => resilient('plain', { route: { tenant: 'a' } })).toThrow(
      expect.objectContaining({
        kind: 'configuration',
        message:
          "Invalid @Resilient(): options.route must be a string, a function of the call or undefined, got { tenant: 'a' }",
      }),
    );
    expect(() => resilient('plain', { route: 'catalog' })).not.toThrow();
    expect(() => resilient('plain', { route: () => 'tenant-a' })).not.toThrow();
    expect(() => resilient('plain', { route: undefined })).not.toThrow();
  });
});

describe('@Resilient on a provider method declared to return something other than a Promise', () => {
  class Product {}

  it('fails the bootstrap: the policy makes the method return a Promise, and callers would get one', async () => {
    @Injectable()
    class Inventory {
      @Resilient('plain')
      stock(): number {
        return 7;
      }

      @Hedged('plain')
      find(): Product[] {
        return [];
      }

      /** A Subject is no plain Observable: wrapped, callers would lose next() and the first call would fail. */
      @Resilient('plain')
      feed(): Subject<number> {
        return new Subject<number>();
      }
    }
    const error = await bootstrapError([], [Inventory]);
    expect(isResilienceError(error)).toBe(true);
    const message = (error as Error).message;
    expect(message).toContain(
      "Inventory.stock is declared to return Number, but under @Resilient/@Hedged it returns a Promise: make it async (': Promise<…>'), or declare ': Observable<…>' with Observable imported from the application's rxjs",
    );
    expect(message).toContain('Inventory.feed is declared to return Subject');
    expect(message).toContain('Inventory.find is declared to return Array');
  });

  it('accepts async methods, Observables, async generators, void and undeclared return types', async () => {
    @Injectable()
    class Fine {
      @Resilient('plain')
      async a(): Promise<number> {
        return 1;
      }

      @Resilient('plain')
      async b() {
        return 1;
      }

      @Resilient('plain')
      c(): Observable<number> {
        return of(1);
      }

      @Resilient('plain')
      async *d(): AsyncGenerator<number> {
        yield 1;
      }

      @Resilient('plain')
      e(): void {}

      @Resilient('plain')
      f(): unknown {
        return Promise.resolve(1);
      }
    }
    expect(await bootstrapError([], [Fine])).toBeUndefined();
  });
});
