"""The sample world the demo runs on: the sample CRM (`crm`: contacts, their episodes and
the messages sent; `people`: the same contacts as an offline People source), the sample
companies' web pages (`company_pages`) and the mail their people send back (`demo_mail`)."""
