import { Controller, Get, Req, UseGuards } from '@nestjs/common';
import { AuthGuard, type AuthenticatedRequest } from '../auth/auth.guard';
import { type InboxMessage, InboxService } from './inbox.service';

@Controller('inbox')
@UseGuards(AuthGuard)
export class InboxController {
  constructor(private readonly inbox: InboxService) {}

  @Get()
  list(@Req() request: AuthenticatedRequest): InboxMessage[] {
    return this.inbox.forUser(request.userId);
  }
}
