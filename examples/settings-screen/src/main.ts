import './webhook-settings';
