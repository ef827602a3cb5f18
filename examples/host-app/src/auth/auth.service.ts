import { Injectable } from '@nestjs/common';
import type { Request } from 'express';

/** Our API gateway authenticates every request and forwards the user id in `x-user-id`. */
@Injectable()
export class AuthService {
  userIdOf(request: Request): number | undefined {
    const id = Number(request.header('x-user-id'));
    return Number.isSafeInteger(id) && id > 0 ? id : undefined;
  }
}
