"""Two ordinary contracts, in English and Chinese, each of two pages (the clauses on both)."""

EN_PAGES = [
    "MASTER SERVICES AGREEMENT\n"
    'This Master Services Agreement is entered into by and between Northwind Analytics Ltd. ("Provider") '
    'and Contoso Retail Inc. ("Customer").\n'
    "1. Term\n"
    "This Agreement commences on March 1, 2026 and continues for an initial term of twelve (12) months.\n"
    "2. Renewal\n"
    "This Agreement renews automatically for successive one-year periods unless either party gives at least "
    "sixty (60) days' written notice of non-renewal before the end of the then-current term.",
    "3. Fees\n"
    "Customer shall pay Provider an annual subscription fee of USD 120,000.\n"
    "4. Payment\n"
    "Invoices are payable within thirty (30) days of the invoice date.\n"
    "5. Termination\n"
    "Either party may terminate this Agreement for material breach if the breach is not cured within "
    "30 days after written notice.\n"
    "6. Governing Law\n"
    "This Agreement is governed by the laws of England and Wales.",
]
ZH_PAGES = [
    "技术服务合同\n"
    "甲方：北京星河科技有限公司\n"
    "乙方：上海云帆信息技术有限公司\n"
    "第一条 合同期限\n"
    "本合同期限为两年，自2026年1月1日起至2027年12月31日止。\n"
    "第二条 续约\n"
    "合同期满后自动续期一年，除非任何一方在期满前三十日书面通知对方不再续约。",
    "第三条 费用\n"
    "本合同服务费总额为人民币50万元。\n"
    "第四条 付款方式\n"
    "甲方应在收到乙方发票后十五个工作日内付款。\n"
    "第五条 合同解除\n"
    "任何一方严重违约且在收到书面通知后十日内未纠正的，守约方有权解除本合同。\n"
    "第六条 适用法律\n"
    "本合同适用中华人民共和国法律。",
]
